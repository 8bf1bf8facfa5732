"""`swarm spawn` through the real CLI: validation (exit 2, one line, nothing registered), --json,
and `swarm logs` / `swarm transcript` of the teammate it started."""

from __future__ import annotations

import json

import pytest

from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from tests.support.agent_fixtures import Crew, error_lines

HIDDEN = ("--backend", "hidden", "--model", "shell")


@pytest.mark.parametrize(("args", "expected"), [
    (("Bad/Name",), "invalid agent name"),
    (("team-lead",), "reserved"),
    (("w1", "--cwd", "/nonexistent/dir"), "is not a directory"),
    (("w1", "--agent-type", "no-such-type"), "unknown agent type 'no-such-type'"),
    (("w1", "--model", "scripted:broken.json"), "does not parse"),
    (("w1", "--model", "scripted:missing.json"), "cannot read script"),
    (("w1", "--max-turns", "0"), "--max-turns must be at least 1"),
    (("w1", "--plan-mode-required", "--permission-mode", "bypassPermissions"),
     "never granted to a plan-mode-required agent"),
])
def test_spawn_rejects_bad_input_and_registers_nothing(crew: Crew, args: tuple[str, ...],
                                                       expected: str) -> None:
    (crew.workdir / "broken.json").write_text("{not json")
    proc = crew.cli("spawn", *HIDDEN, *args, "--prompt", "$ echo hi")
    assert proc.returncode == 2, proc.stderr
    (line,) = error_lines(proc)
    assert line.startswith("swarm: error: ") and expected.lower() in line.lower(), line
    assert proc.stdout == ""
    assert [m.name for m in crew.team.members()] == ["team-lead"]
    assert not paths.inbox(crew.team.name, "w1").exists()  # the prompt was not queued either
    assert not paths.agent_dir(crew.team.name, "w1").exists()


def test_spawn_refuses_a_duplicate_member(crew: Crew) -> None:
    crew.register("w1")
    proc = crew.cli("spawn", "w1", *HIDDEN, "--prompt", "$ echo again")
    assert proc.returncode == 2
    assert error_lines(proc) == ["swarm: error: 'w1' is already a member of team 'crew'; "
                                 "use `swarm respawn w1` to restart it"]
    assert [m.name for m in crew.team.members()] == ["team-lead", "w1"]
    assert crew.team.inbox("w1").messages() == []
    assert crew.team.member("w1").pid is None  # nothing was started


def test_spawn_json_logs_and_transcript(crew: Crew) -> None:
    proc = crew.cli("spawn", "w1", *HIDDEN, "--permission-mode", "bypassPermissions",
                    "--prompt", "$ echo spawned-ok", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["agent_id"] == "w1@crew" and out["backend"] == "hidden"
    assert out["pane_id"] == "hidden:w1" and out["model"] == "shell"
    assert isinstance(out["pid"], int) and is_alive(out["pid"])
    assert crew.team.member("w1").pid == out["pid"]
    crew.wait_idle_notes("w1", 1)

    logs = crew.cli("logs", "w1")
    assert logs.returncode == 0, logs.stderr
    lines = logs.stdout.splitlines()
    assert f"w1@crew started (model shell, mode bypassPermissions, pid {out['pid']})" in lines[0]
    assert any(line.endswith("<- team-lead: initial prompt") for line in lines)
    assert any(line.endswith('-> Bash "echo spawned-ok"') for line in lines)
    assert any(line.endswith("| spawned-ok") for line in lines)  # what the command printed
    assert lines[-1].endswith("idle (available)")

    transcript = crew.cli("transcript", "w1", "--json")
    assert transcript.returncode == 0, transcript.stderr
    entries = json.loads(transcript.stdout)
    assert entries[0]["kind"] == "event" and entries[0]["event"] == "started"
    messages = [e["message"] for e in entries if e["kind"] == "message"]
    assert messages[0]["role"] == "user"
    assert "$ echo spawned-ok</teammate-message>" in messages[0]["content"][0]["text"]
    uses = [b for m in messages for b in m["content"] if b.get("type") == "tool_use"]
    assert [u["name"] for u in uses] == ["Bash", "SendMessage"]
    results = [b for m in messages for b in m["content"] if b.get("type") == "tool_result"]
    assert results[0]["content"].strip() == "spawned-ok"

    human = crew.cli("transcript", "w1")
    shown = human.stdout.splitlines()
    assert any(line.endswith('-> Bash "echo spawned-ok"') for line in shown)
    assert any(line.endswith("| spawned-ok") for line in shown)
    assert "\x1b[" not in human.stdout  # no colour codes when it does not print to a terminal


def test_logs_of_unknown_member_is_bad_input(crew: Crew) -> None:
    proc = crew.cli("logs", "ghost")
    assert proc.returncode == 2
    (line,) = error_lines(proc)
    assert line.startswith("swarm: error: 'ghost' is not a member of team 'crew'")
