"""The network store (SWARM_STORE=redis://...): the same guarantees as the file store, on a real
redis-server the test starts (tests/support/redis_server.py). The concurrency tests run on both stores."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import os
import signal
import threading
import time
from multiprocessing.queues import Queue
from pathlib import Path

import pytest
import redis

from swarm.core.records import base as records
from swarm.core.records.protocol import IdleNotification, dump_structured
from swarm.core.records.state import AgentState
from swarm.core.store.api import DocumentMissing
from swarm.core.store.redis.document import RedisTeamDocument
from swarm.core.team.state import read_state, update_state
from swarm.core.team.team import Team
from swarm.errors import StoreUnavailableError, TaskConflictError
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.helpers import process_gone, wait_until
from tests.support.redis_server import RedisServer

FORK = multiprocessing.get_context("fork")


def _keys(url: str) -> list[str]:
    return sorted(k.decode() for k in redis.Redis.from_url(url).keys("*"))


def _teams_dir(home: Path) -> list[Path]:
    root = home / "teams"
    return list(root.rglob("*")) if root.exists() else []


# -- the store is chosen by SWARM_STORE ----------------------------------------------------------
def test_a_bad_store_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_STORE", "postgres://x")
    result = run_swarm("team", "list")
    assert result.returncode == 2
    assert "SWARM_STORE must be `file` or a redis://" in result.stderr


def test_team_mailbox_tasks_state_live_on_redis_and_a_delete_leaves_no_key(
        redis_url: str, swarm_home: Path) -> None:
    team = Team.create("alpha")
    team.add_member("bob")
    team.send("bob", "hello", sender="team-lead")
    team.tasks.add("one")
    update_state(team.name, "bob", lambda s: setattr(s, "turns", 3))
    assert [m.text for m in team.inbox("bob").unread()] == ["hello"]
    assert read_state(team.name, "bob").turns == 3  # type: ignore[union-attr]
    assert [t.name for t in Team.list()] == ["alpha"]
    assert _teams_dir(swarm_home) == []
    assert all(k.startswith("swarm:alpha:") for k in _keys(redis_url))
    Team.delete("alpha")
    assert _keys(redis_url) == []


def test_mark_read_moves_the_position_and_history_stays(redis_url: str) -> None:
    team = Team.create("alpha")
    team.add_member("bob")
    ids = [team.send("bob", f"m{i}")[0] for i in range(4)]
    box = team.inbox("bob")
    assert box.mark_read([ids[1]]) == 1  # out of order: live, read, above the position
    assert [m.text for m in box.unread()] == ["m0", "m2", "m3"]
    assert box.archived() == []
    assert box.mark_read([ids[0]]) == 1  # the position moves over m0 and m1
    assert [m.text for m in box.archived()] == ["m0", "m1"]
    assert box.mark_read([ids[0]]) == 0  # once
    assert [(m.text, m.read) for m in box.messages(include_archive=True)] == [
        ("m0", True), ("m1", True), ("m2", False), ("m3", False)]


def test_a_newer_idle_note_supersedes_older_unread_ones(redis_url: str) -> None:
    team = Team.create("alpha")
    team.add_member("bob")
    for summary in ("first", "second"):
        team.send("team-lead", dump_structured(records.convert(
            {"from": "bob", "summary": summary}, IdleNotification)), sender="bob")
    unread = team.inbox().unread()
    assert len(unread) == 1 and "second" in unread[0].text


def test_an_unreadable_entry_is_set_aside_alone(redis_url: str) -> None:
    team = Team.create("alpha")
    team.add_member("bob")
    team.send("bob", "before")
    redis.Redis.from_url(redis_url).xadd("swarm:alpha:inbox:bob", {"m": b"{not json"})
    team.send("bob", "after")
    assert [m.text for m in team.inbox("bob").unread()] == ["before", "after"]
    assert redis.Redis.from_url(redis_url).lrange("swarm:alpha:corrupt:bob", 0, -1) == [
        b"{not json"]


def test_readers_racing_over_a_corrupt_team_file_all_see_it_gone_and_one_moves_it(
        redis_url: str) -> None:
    """Every agent and command reads the team file: all that read one corrupt value race to move
    it aside. One moves it; the others find it gone (not a server error). Ten rounds of eight
    readers: a race lost once in a round fails the test."""
    Team.create("alpha")
    client = redis.Redis.from_url(redis_url)
    handles = [Team.open("alpha") for _ in range(8)]
    errors: list[BaseException] = []

    def read(team: Team, barrier: threading.Barrier) -> None:
        barrier.wait(10)
        try:
            team.doc.read()
        except DocumentMissing:
            pass
        except BaseException as exc:  # noqa: BLE001 - what the test is for
            errors.append(exc)

    for round_ in range(10):
        client.set("swarm:alpha:config", b'{"name": "alpha", "members": [' + bytes([48 + round_]))
        barrier = threading.Barrier(len(handles))
        threads = [threading.Thread(target=read, args=(h, barrier)) for h in handles]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == [], round_
        assert client.get("swarm:alpha:config") is None
    moved = sorted(client.get(k) for k in client.keys("swarm:alpha:config.corrupt-*"))
    assert moved == [b'{"name": "alpha", "members": [' + bytes([48 + r]) for r in range(10)]


def test_a_corrupt_read_never_moves_aside_the_good_team_file_written_since(
        redis_url: str) -> None:
    """A reader that parsed a corrupt value moves aside that value only: a good team file written
    after its read is read, not moved away."""
    team = Team.create("alpha")
    client = redis.Redis.from_url(redis_url)
    good = client.get("swarm:alpha:config")
    assert good is not None
    stale = b"{torn"  # what the reader read; a good file was written after its read
    doc = team.doc
    assert isinstance(doc, RedisTeamDocument)
    assert doc.set_aside(stale) is False  # not that value any more: nothing moved
    assert client.get("swarm:alpha:config") == good
    assert client.keys("swarm:alpha:config.corrupt-*") == []
    assert team.config().name == "alpha"


def test_claim_is_one_script_that_checks_owner_and_blockers(redis_url: str) -> None:
    team = Team.create("alpha")
    for name in ("bob", "amy"):
        team.add_member(name)
    first = team.tasks.add("first")
    second = team.tasks.add("second", blocked_by=[first.id])
    with pytest.raises(TaskConflictError, match="blocked by unfinished task"):
        team.tasks.claim(second.id, "bob")
    assert team.tasks.claim_next("bob").id == first.id  # type: ignore[union-attr]
    with pytest.raises(TaskConflictError, match="already owned by bob"):
        team.tasks.claim(first.id, "amy")
    assert team.tasks.claim_next("amy") is None  # #2 still blocked
    team.tasks.update(first.id, status="completed", actor="bob")
    claimed = team.tasks.claim_next("amy")
    assert claimed is not None and claimed.id == second.id and claimed.blocked_by == [first.id]
    assert team.tasks.get(first.id).blocks == [second.id]


def test_heartbeats_are_keys_that_expire(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.core.store import select as stores

    monkeypatch.setenv("SWARM_HEARTBEAT_STALE", "7")
    team = Team.create("alpha")
    update_state(team.name, "bob", lambda s: None)
    ttl = redis.Redis.from_url(redis_url).ttl("swarm:alpha:hb:bob")
    assert 0 < ttl <= 7
    store = stores.team_store()
    assert store.shared and store.heartbeat_age("alpha", "bob") is not None
    assert not store.heartbeat_expired("alpha", "bob")


def test_a_watcher_wakes_on_its_mailbox_only(redis_url: str) -> None:
    team = Team.create("alpha")
    for name in ("bob", "amy"):
        team.add_member(name)
    with team.inbox("bob").watcher() as watcher:
        team.send("amy", "not for bob")
        assert watcher.wait(0.2) is False
        team.send("bob", "for bob")
        assert watcher.wait(5.0) is True


# -- concurrency: on both stores -----------------------------------------------------------------
def _sender(team_name: str, index: int, count: int,
            barrier: multiprocessing.synchronize.Barrier) -> None:
    team = Team.open(team_name)
    barrier.wait()
    for number in range(count):
        team.send("owner", f"{index}:{number}", sender=f"w{index}")


def test_eight_writers_two_hundred_each_while_the_owner_reads(store: str) -> None:
    writers, count = 8, 200
    team = Team.create("many")
    team.add_member("owner")
    for index in range(writers):
        team.add_member(f"w{index}")
    box = team.inbox("owner")
    barrier = FORK.Barrier(writers + 1)
    procs = [FORK.Process(target=_sender, args=(team.name, i, count, barrier))
             for i in range(writers)]
    for proc in procs:
        proc.start()
    barrier.wait()
    seen: list[str] = []
    with box.watcher() as watcher:
        while len(seen) < writers * count:
            unread = box.unread()
            if unread:
                seen += [m.text for m in unread]
                box.mark_read([m.id for m in unread])
            elif not watcher.wait(30.0):
                break
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert box.unread() == []
    assert sorted(seen) == sorted(f"{i}:{n}" for i in range(writers) for n in range(count))
    for index in range(writers):  # every message once, in each sender's order
        mine = [int(t.split(":")[1]) for t in seen if t.startswith(f"{index}:")]
        assert mine == list(range(count))


def _racer(team_name: str, name: str, barrier: multiprocessing.synchronize.Barrier,
           out: Queue[tuple[str, str]]) -> None:
    tasks = Team.open(team_name).tasks
    barrier.wait()
    while (task := tasks.claim_next(name)) is not None:
        out.put((name, task.id))
    out.put((name, "done"))


def test_six_processes_race_over_thirty_tasks(store: str) -> None:
    team = Team.create("race")
    names = [f"r{i}" for i in range(6)]
    for name in names:
        team.add_member(name)
    gate = team.tasks.add("gate: never completed")
    blocked = set()
    for number in range(29):
        if number % 5 == 0:
            blocked.add(team.tasks.add(f"blocked {number}", blocked_by=[gate.id]).id)
        else:
            team.tasks.add(f"task {number}")
    team.tasks.update(gate.id, status="in_progress", owner="r0")  # taken: not claimable
    barrier = FORK.Barrier(len(names))
    results: Queue[tuple[str, str]] = FORK.Queue()
    procs = [FORK.Process(target=_racer, args=(team.name, n, barrier, results)) for n in names]
    for proc in procs:
        proc.start()
    claims: list[tuple[str, str]] = []
    done = 0
    while done < len(names):
        name, task_id = results.get(timeout=60)
        if task_id == "done":
            done += 1
        else:
            claims.append((name, task_id))
    for proc in procs:
        proc.join(30)
        assert proc.exitcode == 0
    claimed_ids = [t for _, t in claims]
    assert len(claimed_ids) == len(set(claimed_ids)), "a task was claimed twice"
    assert set(claimed_ids) == {t.id for t in team.tasks.list()} - blocked - {gate.id}
    for name, task_id in claims:
        task = team.tasks.get(task_id)
        assert task.owner == name and task.status == "in_progress"
    for task_id in blocked:
        assert team.tasks.get(task_id).owner is None


# -- faults --------------------------------------------------------------------------------------
def test_redis_stopped_is_a_one_line_cli_error(redis_server: RedisServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_STORE", redis_server.url)
    assert run_swarm("team", "create", "alpha").returncode == 0
    redis_server.stop()
    for args in (("team", "list"), ("send", "--team", "alpha", "team-lead", "hi"),
                 ("tasks", "list", "--team", "alpha")):
        result = run_swarm(*args)
        assert result.returncode == 1, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "unreachable" in lines[0], (args, result.stderr)
        assert f"127.0.0.1:{redis_server.port}" in lines[0]
        assert "Traceback" not in result.stderr


def test_an_unpatient_call_raises_and_a_patient_one_waits_for_the_server(
        redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.core.store.redis.connection import RedisConnection

    monkeypatch.setenv("SWARM_STORE", redis_server.url)
    store = RedisConnection(redis_server.url)
    store.run(lambda: store.client.set("swarm:x:k", "1"))
    redis_server.stop()
    with pytest.raises(StoreUnavailableError, match="unreachable"):
        store.run(lambda: store.client.get("swarm:x:k"))
    said: list[str] = []

    def restart_on_first_complaint(text: str) -> None:
        said.append(text)
        if len(said) == 1:
            redis_server.start()

    store.be_patient(restart_on_first_complaint)
    assert store.run(lambda: store.client.set("swarm:x:k", "2"))
    assert said[0].startswith("store unreachable") and said[-1].startswith("store reachable")


def test_state_written_by_two_writers_loses_neither(redis_url: str) -> None:
    team = Team.create("alpha")

    def bump(state: AgentState) -> None:
        state.turns += 1

    procs = [FORK.Process(target=lambda: [update_state(team.name, "bob", bump)
                                          for _ in range(50)]) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert read_state(team.name, "bob").turns == 200  # type: ignore[union-attr]
    assert os.environ["SWARM_STORE"] == redis_url


# -- a whole team on Redis -----------------------------------------------------------------------
def test_a_whole_team_runs_on_redis_with_nothing_under_teams(
        redis_url: str, swarm_home: Path, crew: Crew) -> None:
    final, _ = crew.six_jobs_over_two_teammates(timeout=30)
    assert all(t.status == "completed" and f"job-{t.id}" in (t.result or "") for t in final)
    assert {t.owner for t in final} == {"w1", "w2"}
    status = crew.cli("status")
    assert status.returncode == 0 and "w1" in status.stdout and "w2" in status.stdout
    report = crew.cli("report", "--json")
    assert report.returncode == 0, report.stderr
    assert "job-1" in report.stdout
    assert crew.cli("shutdown", "--all", "--timeout", "20").returncode == 0
    # Team state is on Redis; only what belongs to the agents' host is on disk.
    assert _teams_dir(swarm_home) == []
    local = swarm_home / "hosts-local" / crew.team.name / "agents"
    assert (local / "w1" / "transcript.jsonl").is_file()
    keys = _keys(redis_url)
    for kind in ("config", "tasks", "inbox:w1", "inbox:team-lead", "state:w1", "events"):
        assert f"swarm:{crew.team.name}:{kind}" in keys
    assert crew.cli("team", "delete", crew.team.name).returncode == 0
    assert _keys(redis_url) == []


def test_doctor_checks_the_server_and_warns_without_an_append_only_file(
        redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_STORE", redis_server.url)
    result = run_swarm("doctor")
    assert "ok  store: Redis " in result.stdout, result.stdout
    assert "no append-only file" in result.stdout
    redis.Redis.from_url(redis_server.url).config_set("appendonly", "yes")
    assert "no append-only file" not in run_swarm("doctor").stdout
    redis_server.stop()
    down = run_swarm("doctor")
    assert "!!  store: the store redis://127.0.0.1" in down.stdout and "unreachable" in down.stdout
    assert "Traceback" not in down.stderr


def test_an_exiting_patient_store_gives_up_after_its_grace(
        redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.core.store.redis.connection import RedisConnection

    store = RedisConnection(redis_server.url)
    said: list[str] = []
    store.be_patient(said.append)
    redis_server.stop()
    store.give_up_after(0.5)  # exiting: what it still has to write may wait this long, no more
    with pytest.raises(StoreUnavailableError, match="unreachable"):
        store.run(lambda: store.client.get("swarm:x:k"))
    assert said and said[0].startswith("store unreachable")


def test_sigterm_ends_an_agent_whose_store_is_gone(
        redis_server: RedisServer, redis_url: str, crew: Crew,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_STORE_EXIT_GRACE", "2")  # the agent's last writes wait 2 s, not 10
    proc = crew.cli("spawn", "w1", "--backend", "hidden", "--model", "shell",
                    "--cwd", str(crew.workdir))
    assert proc.returncode == 0, proc.stderr
    crew.wait_state("w1", "idle")
    state = read_state(crew.team.name, "w1")
    assert state is not None and state.pid
    pid = state.pid
    redis_server.stop()
    os.kill(pid, signal.SIGTERM)
    killed = time.monotonic()
    # Its exit records what it can within the grace, then goes: never a process nobody can stop.
    assert wait_until(lambda: process_gone(pid), 40)
    assert time.monotonic() - killed < 8  # its grace, not the default 10 s
