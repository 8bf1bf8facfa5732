"""`swarm team resume`: every process of a team killed at once (a reboot, kill -9 of everything),
then the team comes back: each member that was not shut down is respawned with its
conversation, the tasks its death gave back are done once, its unread mail is handled, its
worktree is the one it had; a second resume starts nothing; `--dry-run` starts nothing."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.store import paths
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_fixtures import Crew, agent_processes
from tests.support.git_helpers import init_repo
from tests.support.helpers import process_gone, wait_until

FOUR = ("w1", "w2", "w3", "w4")


@pytest.fixture(autouse=True)
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")


def kill_everything(crew: Crew) -> None:
    """SIGKILL every agent process of this test's SWARM_HOME and everything below it (its Bash
    commands), as a reboot leaves them: nobody records anything."""
    procs: list[psutil.Process] = []
    for agent in agent_processes(paths.home()):
        with contextlib.suppress(psutil.Error):
            procs += [agent, *agent.children(recursive=True)]
    assert procs
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    for child in crew.procs.values():  # our own children: reap them
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(5)
    wait_until(lambda: not agent_processes(paths.home()), 10, message="agents still running")


def resume(crew: Crew, *args: str) -> dict[str, Any]:
    proc = crew.cli("team", "resume", *args, "--json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def rows(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in data["members"]}


def lines_of(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_a_team_of_four_killed_at_once_resumes_and_finishes_with_nothing_lost_or_done_twice(
        store: str, crew: Crew) -> None:
    init_repo(crew.workdir, {"README": "x\n"})
    out, gate = crew.workdir.parent / "done.txt", crew.workdir.parent / "gate"
    # A member shut down before the crash stays down.
    crew.spawn("quitter")
    crew.wait_state("quitter", "idle")
    proc = crew.cli("shutdown", "quitter", "--timeout", "20")
    assert proc.returncode == 0, proc.stderr
    crew.wait_state("quitter", "exited")
    for name in FOUR:
        crew.spawn(name, worktree=name == "w4")
    for name in FOUR:
        crew.wait_state(name, "idle")
    tree = crew.team.member("w4").worktree_path
    assert tree and Path(tree).is_dir()

    tasks = crew.team.tasks
    # The first four wait for the gate: each of the four is in the middle of one when killed.
    gated = [tasks.add(f"gated {i}", description=(
        f"$ until [ -e {gate} ]; do sleep 0.05; done; echo T{i} >> {out}")) for i in range(1, 5)]
    ids = [t.id for t in gated]

    def job(i: int, *blockers: str) -> None:
        ids.append(tasks.add(f"job {i}", description=f"$ echo T{i} >> {out}",
                             blocked_by=list(blockers)).id)

    job(5, ids[0])
    job(6, ids[4])
    job(7, ids[1])
    job(8, ids[6], ids[5])
    for i in range(9, 13):
        job(i)
    # Each of the four claims one gated task (the lowest available) and is inside its command.
    wait_until(lambda: all((s := read_state(crew.team.name, n)) is not None and s.child_pgid
                           for n in FOUR), 20, message="the four running their gated tasks")
    owners = {t.id: t.owner for t in tasks.list() if t.status == "in_progress"}
    assert sorted(owners) == sorted(ids[:4]) and sorted(owners.values()) == list(FOUR)  # type: ignore[type-var]
    # Mail that waits unread (w1 is busy) when the crash comes.
    crew.send("w1", f"$ echo mail-1 >> {out}")

    kill_everything(crew)
    gate.touch()

    # --dry-run: who would start and why; nothing starts, nothing is recorded.
    dry = resume(crew, "--dry-run")
    assert dry["dry_run"] is True
    planned = rows(dry)
    assert {n for n, r in planned.items() if r["action"] == "start"} == set(FOUR)
    assert planned["quitter"]["action"] == "stays down"
    assert "shut down" in planned["quitter"]["why"]
    assert not agent_processes(paths.home())
    assert all(read_state(crew.team.name, n).state == "working" for n in FOUR)  # type: ignore[union-attr]

    done = resume(crew)
    started = rows(done)
    assert {n for n, r in started.items() if r["action"] == "started"} == set(FOUR)
    assert all(started[n]["pid"] for n in FOUR)
    assert started["quitter"]["action"] == "stays down"
    # Each keeps the task it was in the middle of (the owner continues it).
    assert {started[n]["kept"][0]: n for n in FOUR} == owners

    proc = crew.cli("wait", "--until", "tasks-done", "--timeout", "90", timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert all(t.status == "completed" for t in tasks.list())
    assert {t.id: t.owner for t in tasks.list() if t.id in ids[:4]} == owners
    wait_until(lambda: "mail-1" in lines_of(out), 20, message="the unread mail handled")
    got = lines_of(out)
    assert sorted(got) == sorted([f"T{i}" for i in range(1, 13)] + ["mail-1"]), got
    # The chains held: a task after each of its blockers.
    assert got.index("T5") < got.index("T6") < got.index("T8")
    assert got.index("T1") < got.index("T5") and got.index("T2") < got.index("T7") < got.index("T8")

    # w4 works in the worktree it had; quitter is still down.
    assert crew.team.member("w4").worktree_path == tree
    w4 = read_state(crew.team.name, "w4")
    assert w4 is not None and w4.pid and psutil.Process(w4.pid).cwd() == tree
    assert read_state(crew.team.name, "quitter").state == "exited"  # type: ignore[union-attr]

    # A second resume finds everyone running and starts nothing.
    pids = {n: read_state(crew.team.name, n).pid for n in FOUR}  # type: ignore[union-attr]
    again = resume(crew)
    assert [r["name"] for r in again["members"] if r["action"] == "started"] == []
    assert {n for n, r in rows(again).items() if r["action"] == "running"} == set(FOUR)
    assert {n: read_state(crew.team.name, n).pid for n in FOUR} == pids  # type: ignore[union-attr]
    assert len(agent_processes(paths.home())) == 4
    text = crew.cli("team", "resume")
    assert text.returncode == 0 and "started nothing" in text.stdout, text.stdout + text.stderr


def test_a_teammate_that_left_as_an_orphan_is_resumed_one_dead_before_it_is_too(
        crew: Crew) -> None:
    """Exited with lead_gone (its lead died first) is part of the crash: it comes back; so does
    one already recorded dead. Their conversation continues (same transcript, restarted note)."""
    for name in ("a", "b"):
        crew.spawn(name, prompt=f"$ echo hello-{name}")
    for name in ("a", "b"):
        crew.wait_idle_notes(name, 1)
    os.kill(crew.procs["a"].pid, signal.SIGTERM)
    crew.wait_state("a", "exited")

    def orphaned(state: Any) -> None:
        state.detail = "lead_gone: the lead process 4242 is gone"

    from swarm.core.team.state import update_state
    update_state(crew.team.name, "a", orphaned)
    os.kill(crew.procs["b"].pid, signal.SIGKILL)
    crew.procs["b"].wait(5)
    assert crew.cli("status").returncode in (0, 1)  # records b's death
    crew.wait_state("b", "dead")

    done = resume(crew)
    started = rows(done)
    assert started["a"]["action"] == "started" and "lead_gone" in started["a"]["why"]
    assert started["b"]["action"] == "started"
    for name in ("a", "b"):
        crew.wait_state(name, "idle", "working")
    crew.send("a", f"$ echo again-a >> {crew.workdir / 'again'}")
    wait_until(lambda: (crew.workdir / "again").exists(), 20, message="a handles mail")
    assert any("restarted" in " ".join(texts) for texts in crew.inputs("a"))


def test_the_lead_seat_a_dead_swarm_lead_is_named_or_given_to_the_shell(crew: Crew) -> None:
    """A team led by `swarm lead` whose lead died: resume prints the command that continues
    it; with --shell-lead the person's shell leads instead (no orphan rule for the teammates)."""
    gone = subprocess.Popen(["true"])
    gone.wait()

    def dead_lead(config: Any) -> None:
        config.lead_pid, config.lead_started_at = gone.pid, 1.0

    crew.team.update(dead_lead)
    data = resume(crew, "--dry-run")
    assert data["lead"]["state"] == "gone"
    assert data["lead"]["command"] == f"swarm lead --resume --team {crew.team.name}"
    assert crew.team.config().lead_pid == gone.pid
    text = crew.cli("team", "resume")
    assert text.returncode == 0, text.stderr
    assert f"swarm lead --resume --team {crew.team.name}" in text.stdout
    assert "started nothing" in text.stdout
    data = resume(crew, "--shell-lead")
    assert data["lead"]["state"] == "shell"
    assert Team.open(crew.team.name).config().lead_pid is None
    # A shell-led team: nothing to start for the lead.
    assert resume(crew)["lead"] == {"state": "shell", "command": None}


def test_resume_of_a_team_that_does_not_exist_is_one_line(crew: Crew) -> None:
    proc = crew.cli("team", "resume", "no-such-team")
    assert proc.returncode != 0
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1, proc.stderr
    assert "no-such-team" in proc.stderr
    assert Team.open(crew.team.name).config().members  # nothing touched


def test_tmux_members_come_back_in_a_new_session_when_the_server_is_gone(
        server: Any, crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reboot takes the tmux server too: resume makes the team's session again, a pane per
    member, and the member handles its mail there."""
    monkeypatch.setenv("SWARM_TMUX_SOCKET", str(server.socket_name))
    for name in ("t1", "t2"):
        proc = crew.cli("spawn", name, "--backend", "tmux", "--model", "shell",
                        "--permission-mode", "bypassPermissions", "--cwd", str(crew.workdir))
        assert proc.returncode == 0, proc.stderr
    for name in ("t1", "t2"):
        crew.wait_state(name, "idle")
    kill_everything(crew)
    old = int(server.cmd("display-message", "-p", "#{pid}").stdout[0])
    server.kill()  # returns before the server is gone: a client meanwhile reaches the dying one
    wait_until(lambda: process_gone(old), 10, message="the tmux server gone")

    done = resume(crew)
    assert {n for n, r in rows(done).items() if r["action"] == "started"} == {"t1", "t2"}
    for name in ("t1", "t2"):
        crew.wait_state(name, "idle")
    assert server.is_alive()
    panes = {p.pane_id for s in server.sessions for p in s.panes}
    new = {crew.team.member(n).pane_id for n in ("t1", "t2")}
    assert new <= panes, (new, panes)
    assert crew.team.member("t1").backend == "tmux"
    out = crew.workdir / "tmux-mail"
    crew.send("t2", f"$ echo from-t2 >> {out}")
    wait_until(lambda: lines_of(out) == ["from-t2"], 20, message="t2 handles its mail")


def test_a_worktree_deleted_while_down_is_checked_out_again_on_its_branch(crew: Crew) -> None:
    """Its directory gone (deleted, a wiped disk) but its branch kept: the member comes back
    in a worktree at the same path on the same branch, its commits there, not in a fresh
    branch from HEAD."""
    init_repo(crew.workdir, {"README": "x\n"})
    crew.spawn("w", worktree=True,
               prompt="$ echo work > mine.txt && git add mine.txt && git commit -qm mine")
    crew.wait_idle_notes("w", 1)
    member = crew.team.member("w")
    tree, branch = member.worktree_path, member.worktree_branch
    assert tree and branch and (Path(tree) / "mine.txt").exists()
    kill_everything(crew)
    shutil.rmtree(tree)

    started = rows(resume(crew))["w"]
    assert started["action"] == "started" and started["worktree"] == tree
    crew.wait_state("w", "idle")
    again = crew.team.member("w")
    assert (again.worktree_path, again.worktree_branch) == (tree, branch)
    assert (Path(tree) / "mine.txt").read_text() == "work\n"
    head = subprocess.run(["git", "-C", tree, "branch", "--show-current"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert head == branch


def test_a_task_in_progress_stays_with_its_owner_who_continues_it(crew: Crew) -> None:
    """The owner is resumed: its task is kept with it (not given back for the idle teammate to
    start over) and it continues that task first, with the conversation that began it."""
    out, gate = crew.workdir / "done.txt", crew.workdir / "gate"
    for name in ("a", "b"):
        crew.spawn(name)
    for name in ("a", "b"):
        crew.wait_state(name, "idle")
    task = crew.team.tasks.add("gated", description=(
        f"$ until [ -e {gate} ]; do sleep 0.05; done; echo T >> {out}"))
    owner = wait_until(lambda: crew.team.tasks.get(task.id).owner, 20, message="a claim")
    wait_until(lambda: (s := read_state(crew.team.name, owner)) is not None
               and s.child_pgid, 20, message=f"the gated task running ({crew.log(owner)[-1500:]})")
    other = "b" if owner == "a" else "a"
    victim = psutil.Process(crew.procs[owner].pid)  # type: ignore[index]
    for proc in [victim, *victim.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):  # a poll's `sleep` may end meanwhile
            proc.send_signal(signal.SIGKILL)
    crew.procs[owner].wait(5)  # type: ignore[index]
    gate.touch()

    planned = rows(resume(crew, "--dry-run"))[owner]  # type: ignore[index]
    assert planned["action"] == "start" and planned["kept"] == [task.id]
    done = rows(resume(crew))
    assert done[owner]["action"] == "started" and done[owner]["kept"] == [task.id]  # type: ignore[index]
    assert done[other]["action"] == "running"
    wait_until(lambda: crew.team.tasks.get(task.id).status == "completed", 30,
               message=f"the task completed (log: {crew.log(owner or '')[-800:]})")
    assert crew.team.tasks.get(task.id).owner == owner
    assert lines_of(out) == ["T"]
    assert not any(f'task-assignment id="{task.id}"' in " ".join(t) for t in crew.inputs(other))
    continued = [t for t in crew.inputs(owner or "") if f'task-assignment id="{task.id}"' in
                 " ".join(t)]
    assert len(continued) == 2 and "restarted" in " ".join(continued[1])
