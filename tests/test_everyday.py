"""Everyday use (issue 34, small findings): an old death does not fail every later `swarm wait`,
`swarm interrupt` of an idle teammate says there was nothing to interrupt, and the shell model
reports a no-op as one."""

from __future__ import annotations

import json
import os
import signal
from types import SimpleNamespace

import pytest

from swarm.lead.interactive import TerminalUI, command
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.shell import ShellModel
from tests.agent_fixtures import Crew
from tests.helpers import wait_until


def dead(crew: Crew, name: str) -> None:
    pid = crew.state(name).pid  # type: ignore[union-attr]
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert crew.exit_code(name) == -signal.SIGKILL

    def seen() -> bool:
        rows = {r["name"]: r for r in json.loads(crew.cli("status", "--json").stdout)}
        return rows[name]["state"] == "dead"

    wait_until(seen, 15, message=f"{name} seen dead")


@pytest.mark.slow
def test_a_death_before_the_wait_is_a_note_not_a_failure(crew: Crew) -> None:
    crew.spawn("w1")
    crew.spawn("w2")
    crew.wait_state("w1", "idle")
    crew.wait_state("w2", "idle")
    dead(crew, "w1")

    waited = crew.cli("wait", "--until", "idle", "--timeout", "10")
    assert waited.returncode == 0, waited.stderr
    assert waited.stderr.strip() == (
        "swarm: note: w1 died before this wait and is left out of it (`swarm respawn w1`"
        " restarts it, `swarm team remove w1` clears it)")
    crew.cli("tasks", "add", "hi", "--description", "$ echo hi")
    done = crew.cli("wait", "--until", "tasks-done", "--timeout", "20")
    assert done.returncode == 0, done.stderr

    # Nobody alive: the wait could only time out, so it fails at once and says how to go on.
    dead(crew, "w2")
    nobody = crew.cli("wait", "--until", "idle", "--timeout", "10")
    assert nobody.returncode == 1
    assert nobody.stderr.strip().splitlines()[-1].startswith(
        "swarm: error: teammate died: w1 (process ")
    assert nobody.stderr.strip().endswith(
        " before this wait, and no teammate is alive: `swarm respawn w1` restarts one,"
        " `swarm team remove w1` clears it")
    # ...but waiting for everyone to have stopped holds.
    assert crew.cli("wait", "--until", "exited", "--timeout", "10").returncode == 0


@pytest.mark.slow
def test_slash_interrupt_of_an_idle_teammate_says_nothing_was_running(
    crew: Crew, capsys: pytest.CaptureFixture[str]
) -> None:
    """The interactive lead's `/interrupt NAME` (the shell's `swarm interrupt` says it too)."""
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    session = SimpleNamespace(lead=SimpleNamespace(team=crew.team))
    command(session, TerminalUI(), "/interrupt w1")  # type: ignore[arg-type]
    assert "w1 is idle: there was no turn to interrupt" in capsys.readouterr().out
    assert crew.cli("interrupt", "w1").stdout.strip() == (
        "w1 is idle: there was no turn to interrupt")
    assert crew.state("w1").state == "idle"  # type: ignore[union-attr]


def test_the_shell_model_reports_a_no_op_as_one() -> None:
    model = ShellModel()
    tools = [{"name": n} for n in ("Bash", "SendMessage")]

    def summary(text: str, tool_names: list[dict[str, str]]) -> str:
        reply = model.complete(ModelRequest(system="", messages=[
            {"role": "user", "content": text}], tools=tool_names))
        (use,) = [b for b in reply.content if b.get("name") == "SendMessage"]
        return str(use["input"]["summary"])

    assert summary("hello there", tools) == "nothing to run: no shell commands in the message"
    assert summary("$ ls\n$ pwd", [{"name": "SendMessage"}]) == (
        "could not run 2 command(s): no Bash tool")
