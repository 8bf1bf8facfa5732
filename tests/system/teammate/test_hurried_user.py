"""Small things a hurried user meets, each with what it should do: a kill of
a stopped member, a wait with nothing to wait for, a bad --timeout, a mode's argument named, a
team folder removed by hand, SWARM_HOME a file, `send '*'` to nobody, a team name lowered, a
denial without a reason, `doctor` failing beside a problem, the notify command run as the
person, an untrusted project's definition named, and the demo's table."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import (
    Message,
    PermissionRequest,
    PermissionResponse,
    dump_structured,
)
from swarm.core.store import paths
from swarm.core.team import attention
from swarm.core.team.team import Team
from swarm.ops.demo import WORKERS
from tests.support.agent_fixtures import SWARM, Crew, agent_processes, run_swarm, stop_tree
from tests.support.helpers import run_cli, turn_over, wait_until

CaptureFixture = pytest.CaptureFixture[str]


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


# -- kill of a member that is not running --------------------------------------------------------

def test_kill_of_a_stopped_member_says_it_is_not_running(crew: Crew) -> None:
    crew.spawn("w1")
    crew.wait_state("w1", "idle")
    first = crew.cli("kill", "w1")
    assert first.returncode == 0 and first.stdout.strip() == "killed w1", first
    again = crew.cli("kill", "w1")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "w1 is not running (exited: killed): nothing to kill", again
    # A member that shut down keeps its own words: a kill does not rewrite them as `killed`.
    crew.spawn("w2")
    crew.wait_state("w2", "idle")
    assert crew.cli("shutdown", "w2").returncode == 0
    late = crew.cli("kill", "w2")
    assert late.stdout.strip() == "w2 is not running (exited: shut down): nothing to kill", late
    assert crew.state("w2").detail == "shut down"  # type: ignore[union-attr]


# -- wait: nothing to wait for, a bad timeout ----------------------------------------------------

def test_waiting_for_the_tasks_of_a_team_with_none_returns_at_once(
        crew: Crew, capsys: CaptureFixture) -> None:
    began = time.monotonic()
    code, out, err = run_cli(capsys, "wait", "--until", "tasks-done", "--timeout", "30")
    assert time.monotonic() - began < 10  # not the 30 s timeout
    assert code == 1, (out, err)
    assert one_line(err) == (f"swarm: error: team {crew.team.name!r} has no tasks: nothing to"
                             " wait for (`swarm tasks add` creates one)")


@pytest.mark.parametrize("command", [("wait", "--until", "idle"), ("shutdown", "--all")])
def test_a_negative_timeout_is_refused_naming_the_option(
        crew: Crew, capsys: CaptureFixture, command: tuple[str, ...]) -> None:
    code, out, err = run_cli(capsys, *command, "--timeout", "-5")
    assert code == 2, (out, err)
    line = one_line(err)
    assert line.startswith("swarm: error: Invalid value for '--timeout': -5"), line


# -- mode: its argument has a name ---------------------------------------------------------------

def test_a_bad_mode_names_the_argument_and_lists_the_modes(
        crew: Crew, capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "mode", "b1", "yolo")
    assert code == 2
    line = one_line(err)
    assert "{" not in line and "Invalid value for 'MODE': 'yolo' is not one of" in line, line
    assert "'acceptEdits'" in line and "'bypassPermissions'" in line, line
    code, out, _ = run_cli(capsys, "mode", "--help")
    assert "Usage: swarm mode [OPTIONS] NAME MODE" in out, out
    assert "default, acceptEdits, plan or bypassPermissions" in out, out


# -- a team folder removed by hand --------------------------------------------------------------

def test_status_of_a_team_removed_by_hand_says_what_still_runs(
        crew: Crew, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Beats far apart: its state is not written again while we look.
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "60")
    result = crew.spawn("w1")
    wait_until(lambda: turn_over(crew.team.name, "w1"), 15, message="w1 idle")
    # Moved away whole (one rename: the agent may write a file there as rmtree walks it).
    paths.team_dir(crew.team.name).rename(tmp_path / "removed-by-hand")
    proc = crew.cli("status")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    line = one_line(proc.stderr)
    assert f"w1 (pid {result.pid}) still runs" in line, line
    assert "no agent of it runs" not in line and "no team named" not in line, line
    # ... and `swarm kill` finds it by its process.
    killed = crew.cli("kill", "w1")
    assert killed.returncode == 0, killed.stderr
    assert crew.exit_code("w1") != 0


# -- SWARM_HOME that is a file --------------------------------------------------------------------

def test_swarm_home_that_is_a_file_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "passwd"
    home.write_text("root:x:0:0::/root:/bin/sh\n")
    proc = run_swarm("team", "list", env={"SWARM_HOME": str(home)})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert one_line(proc.stderr) == f"swarm: error: SWARM_HOME {home} is not a directory"


# -- send '*' to nobody ----------------------------------------------------------------------------

def test_send_to_everyone_of_a_team_with_no_members_fails(
        crew: Crew, capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "send", "*", "hello")
    assert code == 1, (out, err)
    assert one_line(err) == (f"swarm: error: team {crew.team.name!r} has no members but"
                             f" {LEAD_NAME}: nobody to send to (`swarm spawn NAME` starts one)")
    assert crew.team.inbox(LEAD_NAME, checked=False).messages() == []


# -- team create Alpha ---------------------------------------------------------------------------

def test_a_team_name_in_capitals_is_lowered_with_a_note(capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "team", "create", "Alpha")
    assert code == 0, err
    assert out.strip() == "alpha"
    assert "swarm: note: team names are lower case: 'Alpha' is team alpha" in err, err


# -- permissions deny without a reason -------------------------------------------------------------

def test_deny_needs_no_reason(capsys: CaptureFixture, tmp_path: Path) -> None:
    team = Team.create("forge")
    team.add_member("w1", cwd=str(tmp_path))
    request = PermissionRequest(agent_id=f"w1@{team.name}", tool_name="Bash",
                                description="list", input={"command": "ls"})
    team.inbox(LEAD_NAME, checked=False).deliver([Message(sender="w1",
                                                        text=dump_structured(request))])
    code, out, err = run_cli(capsys, "permissions", "deny", request.request_id[:8],
                             "--team", team.name)
    assert code == 0, err
    assert out.strip() == "denied Bash for w1"
    (answer,) = [s for m in team.inbox("w1", checked=False).messages()
                 if isinstance(s := m.structured(), PermissionResponse)]
    assert not answer.approve and answer.feedback == "denied by the person"


# -- doctor fails beside a problem ----------------------------------------------------------------

def test_doctor_exits_non_zero_when_it_prints_a_problem(swarm_home: Path) -> None:
    clean = run_swarm("doctor")
    assert clean.returncode == 0, (clean.stdout, clean.stderr)
    assert "!!" not in clean.stdout
    prices = swarm_home / "prices.json"
    prices.write_text("{")
    prices.chmod(0o600)  # only the one problem: its modes are swarm's own
    proc = run_swarm("doctor")
    assert "!!  prices:" in proc.stdout, proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert one_line(proc.stderr) == "swarm: error: doctor found 1 problem (the !! line above)"
    assert run_swarm("doctor", "--json").returncode == 1


# -- the notify command runs as the person -------------------------------------------------------

def test_the_notify_command_runs_as_the_person_not_the_teammate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    got = tmp_path / "env.txt"
    monkeypatch.setenv("SWARM_NOTIFY_COMMAND", f"env > {got}.tmp && mv {got}.tmp {got}")
    monkeypatch.setenv("SWARM_AGENT_ID", "careful@alpha")  # the teammate that asks rings
    monkeypatch.setenv("SWARM_TEAM", "alpha")
    attention.ring(attention.Alert(team="alpha", sender="careful", kind="permission_request",
                                   request_id="r1", text="Bash: ls", answer="swarm permissions"
                                   " approve r1"), {})
    text = wait_until(lambda: got.read_text() if got.exists() else "", 10,
                      message="the notify command")
    variables = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert "SWARM_AGENT_ID" not in variables, text
    assert variables["SWARM_NOTIFY_SENDER"] == "careful"
    assert variables["SWARM_TEAM"] == "alpha"  # `swarm permissions approve` finds the team


# -- an untrusted project's definition ------------------------------------------------------------

def test_an_untrusted_projects_definition_is_named_with_swarm_trust(
        crew: Crew, capsys: CaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    (project / ".swarm" / "agents").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    definition = project / ".swarm" / "agents" / "iso.md"
    definition.write_text("---\nname: iso\ndescription: isolated\n---\nWork alone.\n")
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "spawn", "w1", "--agent-type", "iso", "--model", "shell")
    assert code == 2, (out, err)
    line = one_line(err)
    assert line.startswith("swarm: error: unknown agent type 'iso'"), line
    assert (f"{definition} is ignored: the project is not trusted (`swarm trust` reviews"
            " it)") in line, line


# -- the demo: whole paths, no hint for a team that is gone ---------------------------------------

def test_the_demo_shows_whole_relative_paths_and_no_hint_for_a_deleted_team(
        tmp_path: Path, swarm_home: Path) -> None:
    root = tmp_path / ("a-rather-long-directory-name-" * 3) / "project"
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "module_with_a_long_name.py").write_text("a = 1\nb = 2\n")
    try:
        proc = subprocess.run([SWARM, "demo", "--backend", "hidden"], capture_output=True,
                              text=True, cwd=root, timeout=60,
                              env={**os.environ, "COLUMNS": "200"})
    finally:
        for agent in agent_processes(swarm_home):
            stop_tree(agent.pid)
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines()
               if line.startswith("#") and "find the five largest Python files" in line)
    assert row.split()[-2:] == ["2", "alpha/module_with_a_long_name.py"], row
    assert "…" not in proc.stdout and str(root) not in proc.stdout, proc.stdout
    assert "swarm attach" not in proc.stdout
    assert set(WORKERS) <= set(proc.stdout.split())
