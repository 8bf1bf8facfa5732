"""`swarm demo` (and `make demo`) through the real CLI: an offline team of three shell workers,
with hidden teammates and with tmux panes on a private tmux server (SWARM_TMUX_SOCKET), that
cleans up after itself unless --keep. `swarm demo --lead` (and `make demo-lead`): the scripted
lead and teammate of examples/ in a headless lead session."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from libtmux.server import Server
from libtmux.session import Session

from swarm.core.store import paths
from swarm.core.store.liveness import is_alive
from swarm.ops.demo import TEAMMATE_SCRIPT, WORKERS, demo_tasks
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path, swarm_home: Path) -> Iterator[Path]:
    """A small project with known line counts; any agent left behind is stopped at teardown."""
    root = tmp_path / "project"
    (root / "alpha").mkdir(parents=True)
    (root / "beta").mkdir()
    (root / "alpha" / "a.py").write_text("a = 1\nb = 2\n# TODO: c\n")
    (root / "beta" / "b.py").write_text("x = 1\n")
    (root / "beta" / "c.py").write_text("y = 1\nz = 2\n")
    (root / "notes").mkdir()  # no Python: not a package to count
    (root / "notes" / ".keep").write_text("")
    try:
        yield root
    finally:
        for proc in agent_processes(swarm_home):
            stop_tree(proc.pid)


def demo(cwd: Path, *args: str, env: dict[str, str] | None = None,
         timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SWARM, "demo", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def summary(stdout: str) -> dict[str, list[str]]:
    """The summary table: task id -> [who, took, subject..., result]."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["TASK", "WHO", "TOOK"])
    rows = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        task, who, took, rest = line.split(None, 3)
        rows[task] = [who, took, rest]
    return rows


def check_summary(stdout: str, root: Path) -> dict[str, list[str]]:
    tasks = demo_tasks(root)
    rows = summary(stdout)
    assert list(rows) == [f"#{i}" for i in range(1, len(tasks) + 1)]  # every task, done
    for (subject, _), (who, took, rest) in zip(tasks, rows.values(), strict=True):
        assert rest.startswith(subject) and who in WORKERS and took.endswith("s")
    assert {row[0] for row in rows.values()} == set(WORKERS)  # three different teammates
    assert f"{len(tasks)} tasks done by 3 teammates in " in stdout
    return rows


def test_hidden_demo_does_real_work_and_leaves_nothing(project: Path, swarm_home: Path) -> None:
    proc = demo(project, "--backend", "hidden")
    assert proc.returncode == 0, proc.stderr
    rows = check_summary(proc.stdout, project)
    subjects = {rest.rsplit(None, 1)[0]: rest.rsplit(None, 1)[1] for _, _, rest in rows.values()}
    assert subjects["count lines of Python in alpha/"] == "3"  # real shell output, per task
    assert subjects["count lines of Python in beta/"] == "3"
    assert subjects["count TODO markers"] == "1"
    assert "(backend: hidden)" in proc.stdout
    assert proc.stdout.rstrip().endswith("team demo shut down and deleted")
    assert "ANTHROPIC_API_KEY" not in os.environ  # it ran with no API key at all
    assert agent_processes(swarm_home) == []
    assert not paths.team_dir("demo").exists()


def test_tmux_demo_on_a_private_server_leaves_no_pane(
    project: Path, swarm_home: Path, server: Server, session: Session
) -> None:
    before = server.cmd("list-panes", "-a", "-F", "#{pane_id}").stdout
    env = {"SWARM_TMUX_SOCKET": str(server.socket_name)}
    proc = demo(project, env=env)  # auto: outside tmux with tmux installed -> tmux
    assert proc.returncode == 0, proc.stderr
    check_summary(proc.stdout, project)
    spawned = [line for line in proc.stdout.splitlines() if line.startswith("spawned ")]
    assert len(spawned) == 3 and all("(tmux, pane %" in line for line in spawned)
    assert "swarm attach" not in proc.stdout  # no hint for a team deleted a moment later
    assert "(backend: tmux)" in proc.stdout
    assert server.cmd("list-panes", "-a", "-F", "#{pane_id}").stdout == before
    assert not server.has_session("swarm-demo") and server.has_session(str(session.session_name))
    assert agent_processes(swarm_home) == []
    assert not paths.team_dir("demo").exists()


def test_keep_leaves_the_team_up_and_says_how_to_watch(project: Path, swarm_home: Path) -> None:
    proc = demo(project, "--keep", "--backend", "hidden")
    try:
        assert proc.returncode == 0, proc.stderr
        check_summary(proc.stdout, project)
        assert "team demo is still running: `swarm logs ada --follow --team demo`" in proc.stdout
        assert "`swarm shutdown --all --team demo`" in proc.stdout
        status = subprocess.run([SWARM, "status", "--team", "demo", "--json"],
                                capture_output=True, text=True, timeout=30)
        assert status.returncode == 0, status.stderr
        members = json.loads(status.stdout)
        assert {m["name"]: m["state"] for m in members} == dict.fromkeys(WORKERS, "idle")
        assert all(is_alive(m["pid"]) for m in members)
        assert len(agent_processes(swarm_home)) == 3
    finally:
        delete = subprocess.run([SWARM, "team", "delete", "demo", "--force"],
                                capture_output=True, text=True, timeout=30)
    assert delete.returncode == 0, delete.stderr
    wait_until(lambda: agent_processes(swarm_home) == [], 10, message="kept agents stopped")
    assert not paths.team_dir("demo").exists()


def test_make_demo_runs_on_the_repository(swarm_home: Path, server: Server,
                                          session: Session) -> None:
    # `-o .venv/.installed`: use the venv as it is (its install step needs the network).
    env = {**os.environ, "SWARM_TMUX_SOCKET": str(server.socket_name)}
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "-o", ".venv/.installed", "demo"],
                          capture_output=True, text=True, env=env, timeout=90)
    try:
        assert proc.returncode == 0, proc.stderr
        check_summary(proc.stdout, REPO)
        assert "team demo shut down and deleted" in proc.stdout
    finally:
        for leftover in agent_processes(swarm_home):
            stop_tree(leftover.pid)
    assert agent_processes(swarm_home) == []
    assert not server.has_session("swarm-demo")


def lead_rows(stdout: str) -> dict[str, list[str]]:
    """The lead demo's report table: task id -> [who, status, subject and result]."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:3] == ["TASK", "WHO", "STATUS"])
    rows = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        task, who, status, rest = line.split(None, 3)
        rows[task] = [who, status, rest]
    return rows


def check_lead_report(stdout: str) -> None:
    rows = lead_rows(stdout)
    assert list(rows) == ["#1", "#2", "#3", "#4"]
    assert [row[:2] for row in rows.values()] == [["ada", "completed"], ["grace", "completed"],
                                                   ["ada", "completed"], ["grace", "completed"]]
    assert "4 of 4 tasks done; teammates: ada, grace, scout; the lead took " in stdout
    assert "lead: Checked the task list" in stdout  # the lead's last word
    assert " killed" not in stdout  # the scripted scout agreed to shut down


def test_lead_demo_plans_spawns_and_reports(project: Path, swarm_home: Path) -> None:
    proc = demo(project, "--lead", "--backend", "hidden")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_lead_report(proc.stdout)
    rows = {rest.rsplit(None, 1)[0]: rest.rsplit(None, 1)[1]
            for _, _, rest in lead_rows(proc.stdout).values()}
    assert rows["count the files"] == "4"  # a.py, b.py, c.py and notes/.keep: real shell output
    assert rows["count the lines of Python"] == "6"
    assert rows["count the TODO markers"] == "1"
    progress = proc.stdout.splitlines()
    assert any(line.endswith("swarm: spawned scout (scripted:" + str(TEAMMATE_SCRIPT)
                             + ", default, hidden)") for line in progress)
    assert any(line.endswith("scout: looked around") for line in progress)  # its SendMessage
    assert "ANTHROPIC_API_KEY" not in os.environ
    assert agent_processes(swarm_home) == []
    assert not paths.team_dir("demo-lead").exists()


def test_make_demo_lead_uses_tmux_when_there_is_one(project: Path, swarm_home: Path,
                                                    server: Server, session: Session) -> None:
    env = {**os.environ, "SWARM_TMUX_SOCKET": str(server.socket_name)}
    proc = subprocess.run(["make", "-s", "-f", str(REPO / "Makefile"), f"VENV={REPO / '.venv'}",
                           "-o", str(REPO / ".venv" / ".installed"), "demo-lead"],
                          capture_output=True, text=True, env=env, cwd=project, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_lead_report(proc.stdout)
    assert "teammates on tmux" in proc.stdout
    assert agent_processes(swarm_home) == []
    assert not server.has_session("swarm-demo-lead")


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

