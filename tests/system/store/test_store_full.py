"""A Redis at maxmemory with `maxmemory-policy noeviction`: every write that
could grow memory fails with OOM. The CLI says "store full" in one line (exit 1, nothing
written); a teammate waits it out like an outage (its pane says so once) and loses no message:
before the fix, the OOM error killed its heartbeat thread or crashed it at its next write.
A real redis-server with the policy in its own command line; the limit set once the team runs
(1 MB: below what a running team already uses, so every such write is refused)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from swarm.core.store.liveness import is_alive
from tests.support.agent_fixtures import Crew, error_lines
from tests.support.helpers import wait_until
from tests.support.redis_server import REDIS_SERVER, RedisServer


@pytest.fixture
def full_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(tmp_path / "redis", "--maxmemory-policy", "noeviction")
    server.start()
    monkeypatch.setenv("SWARM_STORE", server.url)
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.3")
    try:
        yield server
    finally:
        server.stop()


def _fill(server: RedisServer) -> redis.Redis:
    client = redis.Redis.from_url(server.url)
    client.config_set("maxmemory", "1mb")
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        client.set("probe", b"x")
    return client


def _room(client: redis.Redis) -> None:
    client.config_set("maxmemory", "0")  # no limit again


def test_a_send_to_a_full_store_is_one_line_and_writes_nothing(
        full_redis: RedisServer, crew: Crew) -> None:
    crew.register("w1")
    client = _fill(full_redis)
    before = client.xlen(f"swarm:{crew.team.name}:inbox:w1")
    for args in (("send", "w1", "hello"), ("tasks", "add", "a job")):
        proc = crew.cli(*args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        (line,) = error_lines(proc)
        assert line.startswith("swarm: error: the store redis://127.0.0.1:"), line
        assert "is full" in line and "maxmemory" in line, line
        assert "unexpected" not in line and "Traceback" not in proc.stderr
    assert client.xlen(f"swarm:{crew.team.name}:inbox:w1") == before
    _room(client)
    assert crew.cli("send", "w1", "hello").returncode == 0


def _said(crew: Crew, name: str, text: str) -> bool:
    return any(text in str(entry) for entry in crew.transcript(name))


def test_a_teammate_waits_out_a_full_store_and_loses_no_message(
        full_redis: RedisServer, crew: Crew) -> None:
    crew.spawn("w1")
    state = crew.wait_state("w1", "idle")
    crew.send("w1", "$ sleep 1; echo first-job")
    crew.wait_state("w1", "working")
    client = _fill(full_redis)  # mid-turn: its heartbeat, its state and its idle note are refused
    wait_until(lambda: "store full" in crew.log("w1") and _said(crew, "w1", "first-job"), 15,
               message=f"w1 ran its job and says the store is full (log: {crew.log('w1')[-600:]})")
    assert crew.procs["w1"].poll() is None, crew.log("w1")[-1500:]
    # (Not read here: at maxmemory Redis refuses every MULTI, reads too.)
    _room(client)
    assert len(crew.wait_idle_notes("w1", 1, timeout=20)) == 1  # kept, not lost
    crew.send("w1", "$ echo second-job")
    crew.wait_idle_notes("w1", 2, timeout=20)
    assert crew.procs["w1"].poll() is None and is_alive(state.pid, state.started_at)
    assert "crashed" not in crew.log("w1") and "Traceback" not in crew.log("w1")
    assert "store has room again" in crew.log("w1")
