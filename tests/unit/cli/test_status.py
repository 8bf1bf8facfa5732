"""Live feedback, the parts that need no terminal: a Bash command's output reaches the agent as
it comes; the loop says what it is doing (a model call, a tool) and the state records it; `status
--watch` fits its width and says what each member does, for how long."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from swarm.cli.status import render
from swarm.core.records.state import AgentState, activity_text, elapsed_text
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.errors import ToolError
from swarm.ops.member.health import observe
from swarm.runtime.models.scripted import ScriptedModel
from swarm.runtime.tools.base import ToolContext
from swarm.runtime.tools.builtin import Bash
from swarm.runtime.tools.builtin_inputs import BashInput
from swarm.runtime.turn.hooks import AllowAll, LoopHooks
from swarm.runtime.turn.loop import Loop


def test_bash_hands_out_its_output_while_the_command_runs(tmp_path: Path) -> None:
    """The command waits for a flag the test writes only once the first line was handed out:
    collected at the end (communicate), it would never see the flag and time out."""
    flag = tmp_path / "flag"
    pieces: list[str] = []

    def output(text: str) -> None:
        pieces.append(text)
        if "first" in "".join(pieces):
            flag.touch()

    ctx = ToolContext(team=Team.create("t1"), name="w1", cwd=tmp_path, output=output)
    command = f"echo first; while [ ! -e {flag} ]; do sleep 0.05; done; echo second"
    result = Bash().run(BashInput(command=command, timeout=20), ctx)
    assert result.content == "first\nsecond\n" and not result.is_error
    assert "".join(pieces) == "first\nsecond\n"  # every byte handed out, once
    assert "second" not in pieces[0]


def test_bash_output_split_inside_a_character_is_handed_out_whole(tmp_path: Path) -> None:
    pieces: list[str] = []
    ctx = ToolContext(team=Team.create("t2"), name="w1", cwd=tmp_path, output=pieces.append)
    # é is two bytes; the two halves arrive in two writes
    result = Bash().run(BashInput(command=r"printf '\xc3'; sleep 0.2; printf '\xa9\n'"), ctx)
    assert result.content == "é\n"
    assert "".join(pieces) == "é\n"


def test_bash_timeout_still_keeps_what_was_printed(tmp_path: Path) -> None:
    pieces: list[str] = []
    ctx = ToolContext(team=Team.create("t3"), name="w1", cwd=tmp_path, output=pieces.append)
    with pytest.raises(ToolError) as caught:
        Bash().run(BashInput(command="echo before; sleep 30", timeout=1), ctx)
    assert "before" in str(caught.value) and "timed out after 1s" in str(caught.value)
    assert "".join(pieces) == "before\n"


class Recorder(LoopHooks):
    def __init__(self) -> None:
        self.seen: list[str | None] = []
        self.out: list[str] = []

    def activity(self, what: str | None) -> None:
        self.seen.append(what)

    def tool_output(self, text: str) -> None:
        self.out.append(text)


def test_the_loop_says_what_it_does_and_streams_the_commands_output(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('[{"tool_uses": [{"name": "Bash", "input": {"command": "echo hi"}}]},'
                      ' {"text": "done"}]')
    hooks = Recorder()
    loop = Loop(ScriptedModel(script), {"Bash": Bash()}, "system",
                ToolContext(team=Team.create("t4"), name="w1", cwd=tmp_path), AllowAll(),
                hooks=(hooks,))
    outcome = loop.run([{"type": "text", "text": "go"}])
    assert outcome.last_text == "done"
    assert hooks.seen == ["thinking", None, 'Bash "echo hi"', None, "thinking", None]
    assert "".join(hooks.out) == "hi\n"


def test_elapsed_and_activity_texts() -> None:
    assert [elapsed_text(s) for s in (0, 12.7, 59, 60, 185, 3600, 7325)] == [
        "0s", "12s", "59s", "1m00s", "3m05s", "1h00m", "2h02m"]
    now = 1_000_000.0
    assert activity_text("working", "thinking", now - 12, None, now) == ("thinking", "12s")
    assert activity_text("working", 'Bash "make"', now - 65, None, now) == ('Bash "make"', "1m05s")
    idle_since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now - 180)) + ".000Z"
    assert activity_text("idle", None, None, idle_since, now) == ("idle", "3m00s")
    assert activity_text("idle", None, None, "garbage", now) == ("idle", "")
    assert activity_text("working", None, None, None, now) == ("-", "")
    # team data: control characters print as escapes, never raw
    assert activity_text("working", "Bash \x1b]0;x\n\x07", now, None, now) == (
        "Bash \\x1b]0;x\\x0a\\x07", "0s")


def _states(team: Team) -> None:
    now = time.time()
    write_state(team.name, "alice", AgentState(state="working", activity="thinking",
                                               activity_since=now - 12))
    write_state(team.name, "bob", AgentState(
        state="working", activity='Bash "pytest -q tests/test_a_long_module_name.py"',
        activity_since=now - 75))


def test_watch_table_fits_60_columns_and_says_what_each_does(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    _states(team)
    monkeypatch.setenv("COLUMNS", "60")
    text = render(observe(team, record=False), activity=True)
    lines = text.splitlines()
    assert all(len(line) <= 60 for line in lines), text
    assert lines[0].split()[:4] == ["NAME", "STATE", "ACTIVITY", "FOR"]
    alice = next(line for line in lines if line.startswith("alice"))
    assert alice.split()[1:4] == ["working", "thinking", "12s"]
    bob = next(line for line in lines if line.startswith("bob"))
    assert 'Bash "pytest' in bob and " 1m15s " in bob  # a long command is cut, not its time
    assert "wor…" not in text and "$0.…" not in text


@pytest.mark.parametrize("columns", ["40", "120"])
def test_watch_table_fits_other_widths(team: Team, monkeypatch: pytest.MonkeyPatch,
                                       columns: str) -> None:
    _states(team)
    monkeypatch.setenv("COLUMNS", columns)
    text = render(observe(team, record=False), activity=True)
    assert all(len(line) <= int(columns) for line in text.splitlines()), text
    alice = next(line for line in text.splitlines() if line.startswith("alice"))
    assert " 12s " in alice


def test_plain_status_has_no_activity_column(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    _states(team)
    text = render(observe(team, record=False), wide=True)
    assert "ACTIVITY" not in text and "thinking" not in text
