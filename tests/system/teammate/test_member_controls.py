"""`swarm mode`, `swarm team remove` and `swarm respawn --model/--permission-mode` against real
`swarm agent` processes on the offline shell model (hidden backend)."""

from __future__ import annotations

import json
import os

import pytest

from swarm.core.records.protocol import Message, ModeChange, dump_structured
from swarm.core.store import paths
from swarm.errors import ProtocolError
from swarm.ops.report.build import build_report
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until


def test_mode_changes_a_running_teammate_from_its_next_tool_call(crew: Crew) -> None:
    crew.spawn("w", permission_mode="default")
    crew.wait_state("w", "idle")
    proc = crew.cli("mode", "w", "acceptEdits", "--reason", "trusted now")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "w: mode acceptEdits"
    wait_until(lambda: (crew.state("w") or None) and crew.state("w").mode == "acceptEdits",  # type: ignore[union-attr]
               10, message="the idle teammate applies the mode change")
    # The log line follows the state record: wait for it rather than read it once.
    wait_until(lambda: "mode: default -> acceptEdits (set by team-lead): trusted now"
               in crew.log("w"), 10, message="the mode change is logged")
    status = json.loads(crew.cli("team", "show", "--json").stdout)
    assert {m["name"]: m["mode"] for m in status["members"]}["w"] == "acceptEdits"
    # In acceptEdits a Write runs without asking (in default it would wait for an answer).
    crew.send("w", "```write notes.md\nhello\n```")
    crew.wait_idle_notes("w", 1)
    assert (crew.workdir / "notes.md").read_text() == "hello\n"
    assert crew.inputs("w") and all("mode_change" not in t for t in crew.inputs("w")[0])


def test_mode_is_refused_from_a_teammates_shell_and_a_peers_mode_change_is_ignored(
        crew: Crew) -> None:
    crew.register("peer")
    crew.spawn("w", permission_mode="default")
    crew.wait_state("w", "idle")
    env = {**os.environ, "SWARM_AGENT_ID": f"peer@{crew.team.name}"}
    proc = run_swarm("mode", "w", "bypassPermissions", env=env, cwd=crew.workdir)
    assert proc.returncode == 2
    assert "`swarm mode` is for the team lead" in error_lines(proc)[0]
    # A peer cannot send the order, and one forged into the mailbox file is only text.
    with pytest.raises(ProtocolError, match="peer may not send mode_change"):
        crew.team.send("w", ModeChange(mode="bypassPermissions"), sender="peer")
    crew.team.inbox("w", checked=False).deliver([Message(sender="peer", text=dump_structured(
        ModeChange(mode="bypassPermissions")))])
    crew.wait_idle_notes("w", 1)
    assert crew.state("w").mode == "default"  # type: ignore[union-attr]


def test_team_remove_stops_gives_back_tasks_frees_the_name_and_keeps_the_transcript(
        crew: Crew) -> None:
    crew.register("peer")
    crew.spawn("w", prompt="$ echo first-life")
    crew.wait_idle_notes("w", 1)
    blocker = crew.team.tasks.add("first", owner="peer")
    task = crew.team.tasks.add("later", owner="w", blocked_by=[blocker.id])

    proc = crew.cli("team", "remove", "w", "--timeout", "15")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"removed w (exited); gave back task(s) #{task.id}"
    assert crew.exit_code("w") == 0
    assert "w" not in [m.name for m in crew.team.members()]
    back = crew.team.tasks.get(task.id)
    assert back.owner is None and back.status == "pending"
    assert paths.agent_transcript(crew.team.name, "w.removed-1").is_file()

    # The name is free: a new w starts with an empty conversation.
    crew.spawn("w", prompt="$ echo second-life")
    crew.wait_idle_notes("w", 2)
    assert len(crew.inputs("w")) == 1 and "second-life" in crew.inputs("w")[0][0]
    report = build_report(crew.team.name)
    names = [m.name for m in report.members]
    assert "w" in names and "w.removed-1" in names


def test_team_remove_force_kills_and_unknown_or_lead_are_errors(crew: Crew) -> None:
    crew.spawn("w")
    crew.wait_state("w", "idle")
    crew.team.tasks.add("long", description="$ sleep 30", owner="w")
    wait_until(lambda: crew.team.tasks.get("1").status == "in_progress", 10)
    proc = crew.cli("team", "remove", "w", "--force")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("removed w (killed); gave back task(s) #1")
    assert crew.team.tasks.get("1").status == "pending"
    assert error_lines(crew.cli("team", "remove", "ghost")) == [
        f"swarm: error: 'ghost' is not a member of team {crew.team.name!r}; see `swarm team "
        f"show {crew.team.name}`"]
    assert crew.cli("team", "remove", "team-lead").returncode == 2


def test_respawn_with_a_new_model_and_mode(crew: Crew) -> None:
    crew.spawn("w", permission_mode="default")
    crew.wait_state("w", "idle")
    assert crew.cli("kill", "w").returncode == 0
    bad = crew.cli("respawn", "w", "--model", "scripted:/nonexistent/script.json")
    assert bad.returncode == 2, bad.stderr
    assert crew.state("w").state == "exited"  # type: ignore[union-attr]  # nothing restarted
    proc = crew.cli("respawn", "w", "--permission-mode", "acceptEdits", "--model", "shell")
    assert proc.returncode == 0, proc.stderr
    state = crew.wait_state("w", "idle")
    assert state.mode == "acceptEdits"
    assert crew.team.member("w").permission_mode == "acceptEdits"
