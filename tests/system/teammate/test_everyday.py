"""Everyday use: an old death does not fail every later `swarm wait`,
`swarm interrupt` of an idle teammate says there was nothing to interrupt, and the shell model
reports a no-op as one."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.store import paths
from swarm.lead.interactive import TerminalUI, command
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.shell import ShellModel
from tests.support.agent_fixtures import SWARM, Crew, agent_processes, run_swarm, stop_tree
from tests.support.fake_anthropic import FakeAnthropic, reply
from tests.support.helpers import (
    child_named,
    command_group_recorded,
    process_gone,
    turn_over,
    wait_until,
)


def dead(crew: Crew, name: str) -> None:
    pid = crew.state(name).pid  # type: ignore[union-attr]
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert crew.exit_code(name) == -signal.SIGKILL

    def seen() -> bool:
        rows = {r["name"]: r for r in json.loads(crew.cli("status", "--json").stdout)}
        return rows[name]["state"] == "dead"

    wait_until(seen, 15, message=f"{name} seen dead")


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


def test_short_lines_are_cut_between_words() -> None:
    from io import StringIO

    from swarm.lead.headless import ProgressUI
    from swarm.runtime.teammate.console import brief

    assert brief("alpha beta gamma delta", 15) == "alpha beta..."
    assert brief("alpha   beta\ngamma", 100) == "alpha beta gamma"
    # One long word (a path, a URL) has no word to cut at: cut where the limit is.
    assert brief("/a/very/long/path/without/any/space", 12) == "/a/very/l..."
    out = StringIO()
    ProgressUI(out).message("w1", None, "counted the python files in the repository " * 10)
    line = out.getvalue().rstrip("\n")
    assert line.endswith("..."), line  # cut (the limit is 200), and after a whole word:
    assert line.split(": ", 1)[1].removesuffix("...").split(" ")[-1] in {
        "counted", "the", "python", "files", "in", "repository"}


@pytest.mark.usefixtures("lead_env")
@pytest.mark.parametrize("teammates", [1, 0])
def test_a_killed_leads_bash_command_is_ended(
    fake_api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, teammates: int,
) -> None:
    """SIGKILL leaves the lead no say: its teammates end its command as they leave (orphans),
    and without teammates the first `swarm status` that sees the lead dead does."""
    monkeypatch.setenv("SWARM_ORPHAN_GRACE", "2")
    spawns = [("SpawnTeammate", {"name": "alice", "prompt": "$ echo ready",
                                 "permission_mode": "bypassPermissions"})] * teammates
    fake_api.push(lambda body: reply(None, [*spawns, ("Bash", {"command": "sleep 300; true"})]))
    fake_api.push_text("Done.")
    argv = [SWARM, "lead", "--headless", "--model", "sonnet", "--teammate-model", "shell",
            "--permission-mode", "bypassPermissions", "--backend", "hidden", "--team", "kl",
            "Run a long command."]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        sleeper = child_named(proc.pid, "sleep", 60, message="the lead's Bash command")
        if teammates:
            wait_until(lambda: turn_over("kl", "alice"), 30, message="alice's turn over")
        command_group_recorded("kl", LEAD_NAME, sleeper)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        if not teammates:
            status = run_swarm("status", "--team", "kl", "--json")
            assert status.returncode == 0, status.stderr
        wait_until(lambda: process_gone(sleeper), 2 + 8,
                   message="the killed lead's command ends")
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
        for stray in agent_processes(paths.home()):
            stop_tree(stray.pid)
