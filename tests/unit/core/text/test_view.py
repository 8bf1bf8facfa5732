"""The renderer a pane, `swarm logs` and `swarm transcript` share (swarm.core.text.view), and the
console that prints it in a teammate's pane and keeps it in agent.log."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from swarm.core.text.view import RESULT_LINES, View, plain
from swarm.runtime.teammate.console import Console

PLAIN = View(color=False)


def test_tool_output_is_dimmed_and_cut_with_how_many_more_lines() -> None:
    output = "\n".join(f"line {i}" for i in range(1, 13)) + "\n"
    lines = View().result(output)
    assert len(lines) == RESULT_LINES + 1
    assert all(line.startswith("\x1b[2m") for line in lines)  # dim
    assert [plain(x) for x in lines] == [*(f"   | line {i}" for i in range(1, 6)),
                                         "   ... 7 more lines"]
    assert [plain(x) for x in View(cut=False).result(output)][-1] == "   | line 12"
    assert PLAIN.result("") == ["   (no output)"]
    assert PLAIN.result([{"type": "text", "text": "a\nb"}]) == ["   | a", "   | b"]
    assert PLAIN.result("boom", is_error=True) == ["   ! boom"]


def test_incoming_messages_show_the_sender_in_its_colour() -> None:
    [head, *body] = View().incoming("bob", "green", "ran 1 command(s): ok", "$ make\nok\n")
    assert head.startswith("<- \x1b[32mbob\x1b[0m: ran 1 command(s): ok")
    assert [plain(b).strip() for b in body] == ["$ make", "ok"]
    assert PLAIN.incoming("bob", None, "same text", "same  text") == ["<- bob: same text"]
    many = PLAIN.incoming("amy", "blue", "s", "\n".join("xyzw"))
    assert many[-1].strip() == "... 1 more line"


def test_a_transcript_renders_like_the_pane_and_keeps_everything() -> None:
    body = "\n".join(str(n) for n in range(20))
    entries = [
        {"ts": "2026-01-01T10:00:00.000Z", "kind": "event", "event": "started", "pid": 7,
         "model": "shell"},
        {"ts": "2026-01-01T10:00:01.000Z", "kind": "message", "message": {"role": "user",
         "content": [{"type": "text", "text": '<teammate-message from="team-lead" color="white" '
                      'summary="go &amp; run">$ seq 0 19 &lt;x&gt;</teammate-message>'}]}},
        {"ts": "2026-01-01T10:00:02.000Z", "kind": "message", "message": {"role": "assistant",
         "content": [{"type": "text", "text": "Running it."},
                     {"type": "tool_use", "id": "t1", "name": "Bash",
                      "input": {"command": "seq 0 19"}}]}},
        {"ts": "2026-01-01T10:00:03.000Z", "kind": "message", "message": {"role": "user",
         "content": [{"type": "tool_result", "tool_use_id": "t1", "content": body}]}},
        {"ts": "2026-01-01T10:00:04.000Z", "kind": "message", "message": {"role": "user",
         "content": [{"type": "text", "text": '<task-assignment id="4" subject="a &amp; b">\n'
                      "do it\n</task-assignment>\nYou have claimed task #4."}]}},
        {"ts": "2026-01-01T10:00:05.000Z", "kind": "compaction", "summary": "we ran seq"},
    ]
    lines = View(color=False, cut=False).transcript(entries)
    assert lines[0] == "10:00:00 [started: pid 7, model shell]"
    assert lines[1] == "10:00:01 <- team-lead: go & run"
    assert lines[2].strip() == "$ seq 0 19 <x>"
    assert "10:00:02 says: Running it." in lines and '         -> Bash "seq 0 19"' in lines
    assert "10:00:03    | 0" in lines and "            | 19" in lines  # uncut
    assert "10:00:04 claimed task #4: a & b" in lines
    assert lines[-2:] == ["10:00:05 [compacted]", "            we ran seq"]
    cut = View(color=False).transcript(entries)
    assert "            ... 15 more lines" in cut and "            | 19" not in cut


def test_console_streams_to_the_pane_and_logs_the_whole_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pane = io.StringIO()
    monkeypatch.setattr("sys.stdout", pane)
    log = tmp_path / "agent.log"
    console = Console(log, "w1")
    for piece in ("Hel", "lo the", "re\nsecond ", "line"):
        console.stream(piece)
    assert plain(pane.getvalue()).endswith("says: Hello there\n               second line")
    assert not log.exists()  # the log gets the text once it is whole
    assert console.end_stream("Hello there\nsecond line")
    console.show("idle (available)")
    shown = plain(pane.getvalue()).splitlines()
    assert shown[0].endswith(" says: Hello there") and shown[1].strip() == "second line"
    assert shown[2].endswith(" idle (available)")
    logged = plain(log.read_text()).splitlines()
    assert logged[0].endswith(" says: Hello there") and logged[1].strip() == "second line"
    assert logged[2].endswith(" idle (available)")
    assert not console.end_stream("nothing streamed since")
