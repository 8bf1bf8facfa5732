"""`swarm doctor` finds damage under SWARM_HOME and `--fix` repairs what is safe:
quarantined files, leftovers, loose or foreign modes and owners, a full or read-only disk,
members dead without a record, a lead that is gone, stale git worktree entries.

The tests of tests/unit/ops/doctor/test_damage.py that start processes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from swarm.core.records.protocol import TeammateTerminated
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.team.state import read_state, write_state
from swarm.core.team.team import Team
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import SWARM
from tests.system.cli.test_doctor_damage import doctor, findings, gone_pid


def test_a_healthy_home_has_no_findings(team: Team) -> None:
    team.send("alice", "hello")
    team.tasks.add("a task")
    report = doctor()
    assert report["findings"] == []
    human = subprocess.run([SWARM, "doctor"], capture_output=True, text=True, timeout=60)
    assert "ok  no damage found under SWARM_HOME" in human.stdout.splitlines()



def test_leftovers_are_reported_and_the_empty_or_stale_ones_removed(team: Team) -> None:
    inboxes = paths.inboxes_dir(team.name)
    queued = inboxes / "alice.json.pending"  # the old layout's queue, with a message in it
    queued.write_bytes(b'{"id": "1", "from": "bob", "text": "late"}\n')
    empty = inboxes / "bob.json.pending"
    empty.write_bytes(b"")
    old_box = inboxes / "alice.json"  # a mailbox in the old format: not read any more
    old_box.write_bytes(b'[{"id": "2", "from": "bob", "text": "unread"}]')
    stale_tmp = inboxes / ".alice.jsonl.x1y2.tmp"
    stale_tmp.write_bytes(b"half a rewrite")
    old = time.time() - 3600
    os.utime(stale_tmp, (old, old))
    fresh_tmp = inboxes / ".bob.jsonl.a1b2.tmp"  # may be a write in progress: left alone
    fresh_tmp.write_bytes(b"writing")
    for path in (queued, empty, old_box, stale_tmp, fresh_tmp):
        path.chmod(0o600)

    report = doctor()
    leftovers = findings(report, "leftover")
    assert set(leftovers) == {str(p) for p in (queued, empty, old_box, stale_tmp, fresh_tmp)}
    assert leftovers[str(queued)]["fix"] is None and leftovers[str(empty)]["fix"] == "remove it"
    assert all(p.exists() for p in (queued, empty, stale_tmp))  # nothing changed without --fix

    fixed = findings(doctor("--fix"), "leftover")
    assert {Path(p).name for p, f in fixed.items() if f["fixed"]} == {
        "bob.json.pending", ".alice.jsonl.x1y2.tmp"}
    assert queued.exists() and fresh_tmp.exists() and old_box.exists()
    assert not empty.exists() and not stale_tmp.exists()



def test_loose_modes_are_tightened_and_foreign_owners_reported(team: Team) -> None:
    inboxes = paths.inboxes_dir(team.name)
    inboxes.chmod(0o777)
    team.send("alice", "hi")
    live = paths.inbox(team.name, "alice")
    live.chmod(0o644)
    report = doctor()
    insecure = findings(report, "insecure")
    assert "world-writable" in insecure[str(inboxes)]["detail"]
    assert insecure[str(live)]["detail"] == "mode 0644, should be 0600"
    assert inboxes.stat().st_mode & 0o777 == 0o777  # unchanged without --fix

    if os.geteuid() == 0:  # only root can give a file away
        os.chown(paths.team_config(team.name), 4242, 4242)
    fixed = doctor("--fix")
    assert all(f["fixed"] for f in findings(fixed, "insecure").values())
    assert inboxes.stat().st_mode & 0o777 == 0o700 and live.stat().st_mode & 0o777 == 0o600
    if os.geteuid() == 0:
        [foreign] = findings(fixed, "foreign").values()
        assert foreign["path"] == str(paths.team_config(team.name))
        assert "owned by uid 4242" in foreign["detail"] and foreign["fix"] is None
    assert findings(doctor(), "insecure") == {}



def test_a_member_dead_but_recorded_running_is_reported_then_recorded_by_fix(team: Team) -> None:
    pid = gone_pid()
    write_state(team.name, "alice", AgentState(state="working", pid=pid, current_task="1"))
    task = team.tasks.add("half done")
    team.tasks.claim(task.id, "alice")
    report = doctor()
    [dead] = findings(report, "dead_member").values()
    assert dead["path"] == str(paths.agent_state(team.name, "alice"))
    assert f"state says working but process {pid} is gone" in dead["detail"]
    # Without --fix nothing changes: the state, the task and the lead's mailbox stay as they are.
    state = read_state(team.name, "alice")
    assert state is not None and state.state == "working"
    assert team.tasks.get(task.id).owner == "alice"
    assert team.inbox().messages() == []

    [fixed] = findings(doctor("--fix"), "dead_member").values()
    assert fixed["fixed"] is True
    state = read_state(team.name, "alice")
    assert state is not None and state.state == "dead" and state.terminated_reported
    assert team.tasks.get(task.id).owner is None
    [note] = [m.structured() for m in team.inbox().messages()]
    assert isinstance(note, TeammateTerminated) and note.agent_id == "alice@alpha"
    assert findings(doctor(), "dead_member") == {}



def test_a_team_whose_lead_is_gone_is_reported(team: Team) -> None:
    team.update(lambda config: setattr(config, "lead_pid", os.getpid()))
    assert findings(doctor(), "lead_gone") == {}  # this test process: alive
    pid = gone_pid()
    team.update(lambda config: setattr(config, "lead_pid", pid))
    [gone] = findings(doctor(), "lead_gone").values()
    assert gone["path"] == str(paths.team_config(team.name))
    assert f"the lead's process {pid} is gone" in gone["detail"]
    assert Team.open(team.name).config().lead_started_at is None  # optional, kept on disk



def test_a_stale_worktree_entry_is_reported_and_pruned(crew: Crew, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    spawned = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "shell", "--cwd",
                       str(repo), "--worktree")
    assert spawned.returncode == 0, spawned.stderr
    crew.wait_state("w1", "idle")
    member = crew.team.member("w1")
    assert member.worktree_repo == str(repo.resolve()) and member.worktree_path
    assert findings(doctor(), "worktree") == {}
    # It crashes (no shutdown to tidy its worktree up), and someone deletes the directory.
    state = crew.state("w1")
    assert state is not None and state.pid
    os.kill(state.pid, signal.SIGKILL)
    shutil.rmtree(member.worktree_path)

    [stale] = findings(doctor(), "worktree").values()
    assert stale["path"] == member.worktree_path
    assert "w1@crew: stale git worktree" in stale["detail"]

    def listed() -> str:
        return subprocess.run([*git, "worktree", "list", "--porcelain"], capture_output=True,
                              text=True, check=True).stdout

    assert member.worktree_path in listed()  # not pruned without --fix
    [fixed] = findings(doctor("--fix"), "worktree").values()
    assert fixed["fixed"] is True and member.worktree_path not in listed()
    assert findings(doctor(), "worktree") == {}
