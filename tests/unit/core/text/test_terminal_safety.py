"""Terminal safety: control characters that come from team data (a message, a summary, a task, a
team description, a state's detail, tool output, a transcript, a log) reach a terminal as
visible escapes (`\\x1b`), never raw: no clipboard write (OSC 52), no title change, no screen
clear. Swarm's own colours still work, and `--json` gives the data back unchanged."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from swarm.core.records.protocol import Message
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.core.text.terminal import visible
from swarm.core.text.view import View
from tests.support.helpers import run_cli as run

# Everything a hostile message could carry: OSC 52 (clipboard), OSC 0 (title), a clear screen,
# an 8-bit CSI (C1 0x9b), DEL, a bell and a carriage return that would overwrite the line.
NASTY = ("osc52 \x1b]52;c;aGVsbG8=\x07 title \x1b]0;pwned\x07 clear \x1b[2J "
         "csi \x9b31m del \x7f bell \x07 cr \rfake")
# (A carriage return is escaped, or ends a line where a view splits lines: never raw.)
SHOWN = ("\\x1b]52;c;aGVsbG8=\\x07", "\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x9b31m", "\\x7f")
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OUR_STYLES = re.compile(r"\x1b\[(?:[0-2]|3[0-7]|9[0-7])m")


def assert_safe(text: str, *, styled: bool = False, shown: tuple[str, ...] = SHOWN) -> None:
    """No raw control character (but swarm's own colours when `styled`), and the escapes are
    there for a person to see."""
    bare = OUR_STYLES.sub("", text) if styled else text
    found = sorted({repr(c) for c in RAW.findall(bare)})
    assert not found, f"raw control characters {found} in:\n{text!r}"
    for escape in shown:
        assert escape in bare, f"{escape!r} not shown in:\n{bare}"




@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")


# -- the filter ---------------------------------------------------------------------------------
def test_visible_escapes_c0_del_and_c1_but_newline_and_tab() -> None:
    assert visible("a\x1b[2Jb\tc\nd\x00e\x7ff\x9bg\x85h\x80i") == (
        "a\\x1b[2Jb\tc\nd\\x00e\\x7ff\\x9bg\\x85h\\x80i")
    assert visible("line\r\nnext") == "line\nnext"  # a CRLF file is still lines
    assert visible("ok\rfake") == "ok\\x0dfake"  # a lone CR cannot overwrite the line
    assert visible("plain text, ünïcødé ✓") == "plain text, ünïcødé ✓"
    assert visible(visible(NASTY)) == visible(NASTY)  # filtering twice changes nothing


def test_styles_keep_only_swarms_own_colours() -> None:
    text = "\x1b[2mdim\x1b[0m \x1b[94mblue\x1b[0m \x1b]0;t\x07 \x1b[2J \x1b[8m \x1b[38;5;1m"
    assert visible(text, styles=True) == (
        "\x1b[2mdim\x1b[0m \x1b[94mblue\x1b[0m \\x1b]0;t\\x07 \\x1b[2J \\x1b[8m \\x1b[38;5;1m")
    assert visible(text) == text.replace("\x1b", "\\x1b").replace("\x07", "\\x07")


# -- the CLI's views ----------------------------------------------------------------------------
def test_inbox_and_inbox_show_escape_a_message_and_its_summary(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    [mid] = team.send("team-lead", f"first line\n{NASTY}", sender="bob", summary=NASTY[:120])
    for args in (("inbox", "--team", "alpha"), ("inbox", "--team", "alpha", "--full"),
                 ("inbox", "show", mid[:8], "--team", "alpha")):
        code, out, err = run(capsys, *args)
        assert code == 0, err
        assert_safe(out)
    code, out, _ = run(capsys, "inbox", "--team", "alpha", "--json")
    assert code == 0 and json.loads(out)[0]["text"] == f"first line\n{NASTY}"  # unchanged


def test_a_forged_senders_name_is_escaped_too(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    """Names are checked where they enter; a line written into a mailbox by hand is not."""
    Team("alpha").inbox("team-lead", checked=False).deliver([Message(sender="\x1b]0;pwned\x07", text="hi")])
    code, out, err = run(capsys, "inbox", "--team", "alpha")
    assert code == 0, err
    assert_safe(out, shown=("\\x1b]0;pwned\\x07",))


def test_tasks_list_and_show_escape_subject_and_description(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    task = team.tasks.add("fix \x1b]0;pwned\x07 it", description=NASTY)
    code, out, err = run(capsys, "tasks", "list", "--team", "alpha")
    assert code == 0, err
    assert_safe(out, shown=("\\x1b]0;pwned\\x07",))
    code, out, err = run(capsys, "tasks", "show", task.id, "--team", "alpha")
    assert code == 0, err
    assert_safe(out)
    code, out, _ = run(capsys, "tasks", "show", task.id, "--team", "alpha", "--json")
    assert json.loads(out)["description"] == NASTY


def test_team_show_and_list_escape_the_description_and_a_members_fields(
        capsys: pytest.CaptureFixture[str]) -> None:
    team = Team.create("alpha", description=NASTY)
    team.add_member("alice")
    team.update_member("alice", model="\x1b]0;pwned\x07")  # as a hand-edited team file has it
    for args in (("team", "show", "alpha"), ("team", "list")):
        code, out, err = run(capsys, *args)
        assert code == 0, err
        assert_safe(out)


def test_status_and_wait_escape_a_teammates_detail(
        team: Team, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("alice", "bob"):
        write_state("alpha", name, AgentState(state="exited", detail=NASTY))
    for args in (("status", "--team", "alpha"), ("wait", "--team", "alpha", "--until", "exited")):
        code, out, err = run(capsys, *args)
        assert code == 0, err
        assert_safe(out)
    write_state("alpha", "bob", AgentState(state="dead", detail=NASTY))
    code, _, err = run(capsys, "wait", "--team", "alpha", "--until", "idle")
    assert code == 1
    assert_safe(err)  # the error line quotes the detail too


def test_logs_keep_the_panes_colours_but_escape_the_rest(
        team: Team, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    log = paths.agent_log("alpha", "alice")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"\x1b[2m12:00:00\x1b[0m says: {NASTY}\n")
    monkeypatch.setattr("click.utils.should_strip_ansi", lambda *a, **k: False)  # a terminal
    code, out, err = run(capsys, "logs", "alice", "--team", "alpha")
    assert code == 0, err
    assert "\x1b[2m12:00:00\x1b[0m" in out  # our colour, as the pane had it
    assert_safe(out, styled=True)


def test_transcript_escapes_model_text_tool_output_and_messages(
        team: Team, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = Transcript(paths.agent_transcript("alpha", "alice"))
    transcript.message({"role": "user", "content": (
        f'<teammate-message from="bob" color="blue" summary="hi \x1b]0;pwned\x07">'
        f"{NASTY}</teammate-message>")})
    transcript.message({"role": "assistant", "content": [
        {"type": "text", "text": NASTY},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": NASTY}}]})
    transcript.message({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": NASTY}]})
    transcript.event("ended", detail=NASTY)
    monkeypatch.setattr("click.utils.should_strip_ansi", lambda *a, **k: False)
    code, out, err = run(capsys, "transcript", "alice", "--team", "alpha")
    assert code == 0, err
    assert "\x1b[2m" in out  # the renderer's dim output survives
    assert_safe(out, styled=True)
    assert out.count("\\x1b]0;pwned\\x07") >= 5  # message, summary, says, call, output, event
    code, out, _ = run(capsys, "transcript", "alice", "--team", "alpha", "--json")
    assert json.loads(out)[2]["message"]["content"][0]["content"] == NASTY


# -- the pane renderer --------------------------------------------------------------------------
def test_the_pane_shows_model_text_tool_output_and_messages_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from swarm.runtime.teammate.console import Console

    console = Console(tmp_path / "agent.log", "alice")
    view = console.view
    capsys.readouterr()
    console.stream(f"thinking {NASTY}")
    console.end_stream(f"thinking {NASTY}")
    console.say(f"<- hook: {NASTY}")
    console.show(view.call("Bash", {"command": NASTY}), *view.result(NASTY))
    console.show(*view.result(NASTY, is_error=True))
    console.show(*view.incoming("bob", "blue", NASTY, f"{NASTY}\nmore"))
    console.show(*view.claimed("1", NASTY, NASTY))
    console.show(view.asks(NASTY, "abcdef12"), view.answered(False, NASTY))
    out = capsys.readouterr().out
    assert "\x1b[2m" in out and "\x1b[34m" in out  # dim times, bob in blue: still styled
    assert_safe(out, styled=True)
    assert out.count("\\x1b]0;pwned\\x07") >= 9
    assert_safe((tmp_path / "agent.log").read_text(), styled=True)  # `swarm logs` reads this


def test_view_escapes_data_before_its_own_styles() -> None:
    """Data never smuggles a colour through the renderer either: only swarm's styles are raw."""
    lines = View(color=True).incoming("bob", "blue", "\x1b[31mred", "\x1b[31mred\nnext")
    joined = "\n".join(lines)
    assert "\\x1b[31mred" in joined
    assert "\x1b[31m" not in joined


# -- the lead's console ---------------------------------------------------------------------------
def test_the_interactive_leads_lines_escape_team_data(capsys: pytest.CaptureFixture[str]) -> None:
    from swarm.lead.interactive import TerminalUI

    ui = TerminalUI()
    capsys.readouterr()
    ui.lead_text(NASTY)
    ui.tool_line(f"Bash {NASTY}")
    ui.message("bob", "blue", NASTY)
    ui.notice(NASTY)
    out = capsys.readouterr().out
    assert "\x1b[1mlead\x1b[0m" in out and "\x1b[34mbob\x1b[0m" in out  # its own styles
    assert_safe(out, styled=True)


def test_the_headless_leads_progress_lines_escape_team_data() -> None:
    from swarm.lead.headless import ProgressUI

    stream = io.StringIO()
    ui = ProgressUI(stream)
    ui.lead_text(NASTY)
    ui.message("bob", None, NASTY)
    ui.notice(NASTY)
    ui.tool_line(NASTY)
    assert_safe(stream.getvalue())


def test_status_watch_escapes_team_data(team: Team) -> None:
    from swarm.cli.status import screen

    write_state("alpha", "alice", AgentState(state="exited", detail=NASTY))
    write_state("alpha", "bob", AgentState(state="working", activity=NASTY, activity_since=1.0))
    team.tasks.add("x")
    assert_safe(screen(team))


