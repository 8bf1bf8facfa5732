"""The Redis store's connection, key layout, faults, member state and heartbeats.

Every key of a team is under `swarm:<team>:` (docs/design/scale-out.md has the layout), so a
team deleted leaves none. redis-py is imported here only, and only when SWARM_STORE names a
Redis server (`swarm.core.store.select`).

Faults: a command that cannot reach the server raises StoreUnavailableError (the CLI prints one
line, exit 1). An agent process calls `be_patient`: it then retries with backoff, tells its pane
`store unreachable` once, and goes on where it was when the server answers again.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from swarm import settings
from swarm.core.records import base as records
from swarm.core.trust.secrets import redact, redact_url
from swarm.errors import (
    BadInputError,
    LockTimeoutError,
    MissingExtraError,
    StoreFullError,
    StoreUnavailableError,
)

try:  # every module of the Redis store comes through here: one line for a missing extra
    import redis
except ImportError:
    raise MissingExtraError("SWARM_STORE=redis://...", "redis") from None

if TYPE_CHECKING:
    from swarm.core.records.state import AgentState

log = logging.getLogger(__name__)
T = TypeVar("T")

EVENTS_KEPT = 1000  # the team's change feed (watchers read it): recent entries only
OP_TIMEOUT = 15.0  # seconds one command may take (a blocking read blocks for less)
BLOCK_SLICE_MS = 10_000  # a blocking read's longest block; then it blocks again
_FAULTS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
# maxmemory reached with `noeviction`: the server refuses a write whole (a MULTI is discarded,
# a script refused before it runs), so it is safe to send again once there is room.
_FULL = redis.exceptions.OutOfMemoryError


class RedisConnection:
    """One process's handle on the server (a connection pool shared by its threads)."""

    kind = "redis"

    def __init__(self, url: str) -> None:
        self.url = url
        # TCP keepalive for TCP only: a unix socket's connection takes no such argument.
        keepalive = {} if url.startswith("unix:") else {"socket_keepalive": True}
        try:
            # RESP2 whatever redis-py's default: replies of one shape on every version, and a
            # new connection (each CLI command's) needs no HELLO round trip first.
            self.client: redis.Redis = redis.Redis.from_url(
                url, socket_connect_timeout=3.0, socket_timeout=OP_TIMEOUT, protocol=2,
                **keepalive)
        except ValueError as exc:  # a port that is no number, an unknown scheme...
            raise BadInputError(f"SWARM_STORE {redact_url(url)} is not a Redis URL:"
                                f" {redact(str(exc), also=[url])}") from None
        self._patience: Callable[[str], None] | None = None
        self._give_up_at: float | None = None  # exiting: patient until then only
        self._down_since: float | None = None
        self._full = False  # the outage in `_down_since` is a full server, not a lost one
        self._lock = threading.Lock()
        self._scripts: dict[str, Any] = {}

    # -- keys --------------------------------------------------------------------------------
    @staticmethod
    def key(team: str, *parts: str) -> str:
        return ":".join(("swarm", team, *parts))

    # -- faults ------------------------------------------------------------------------------
    def be_patient(self, say: Callable[[str], None]) -> None:
        """From now on, retry commands the server could not take (an agent: it must not die or
        lose its place because the server restarted); `say` tells the pane."""
        self._patience = say

    def give_up_after(self, seconds: float) -> None:
        """Exiting: keep retrying for `seconds` more at most, then fail as the CLI does, so a
        process told to stop never waits forever on a server that is gone."""
        self._give_up_at = time.monotonic() + seconds

    def run(self, op: Callable[[], T]) -> T:
        """Run `op` (some commands); a fault is StoreUnavailableError (StoreFullError when the
        server is at maxmemory), or, when patient, a retry with backoff (0.1 s doubling to 5 s)
        until the server answers (has room)."""
        pause = 0.1
        while True:
            try:
                result = op()
            except (*_FAULTS, _FULL) as exc:
                full = isinstance(exc, _FULL)
                gone = self._give_up_at is not None and time.monotonic() >= self._give_up_at
                if self._patience is None or gone:
                    raise self._error(exc, full) from None
                self._unreachable(exc, full)
                if self._give_up_at is not None:  # exiting: never sleep past the last try
                    pause = min(pause, max(0.0, self._give_up_at - time.monotonic()))
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
                continue
            if self._down_since is not None:
                self._reachable()
            return result

    def _error(self, exc: Exception, full: bool) -> StoreUnavailableError:
        if full:
            return StoreFullError(
                f"the store {redact_url(self.url)} is full (its maxmemory is reached and it "
                "evicts nothing): the command was refused, nothing of it done; free memory on "
                "the server or raise its maxmemory")
        return StoreUnavailableError(f"the store {redact_url(self.url)} is unreachable: {_why(exc)}")

    def _unreachable(self, exc: Exception, full: bool = False) -> None:
        with self._lock:
            if self._down_since is not None:
                return
            self._down_since = time.monotonic()
            self._full = full
        # An OOM error quotes the refused command (a message's text): not for the pane or log.
        what, why = ("store full", "maxmemory reached") if full else ("store unreachable",
                                                                       _why(exc))
        log.warning("%s: %s", what, why)
        if self._patience is not None:
            self._patience(f"{what} ({redact_url(self.url)}: {why}); retrying")

    def _reachable(self) -> None:
        with self._lock:
            since, self._down_since = self._down_since, None
        if since is not None and self._patience is not None:
            back = "has room again" if self._full else "reachable again"
            self._patience(f"store {back} after {time.monotonic() - since:.1f}s")

    def script(self, source: str) -> Any:
        """`source` as a server-side script (EVALSHA), registered once per process."""
        found = self._scripts.get(source)
        if found is None:
            found = self._scripts[source] = self.client.register_script(source)
        return found

    # -- teams -------------------------------------------------------------------------------
    def team_names(self) -> builtins.list[str]:
        def scan() -> builtins.list[str]:
            found = set()
            for raw in self.client.scan_iter(match="swarm:*:config", count=1000):
                name = raw.decode()[len("swarm:"):-len(":config")]
                if ":" not in name:
                    found.add(name)
            return sorted(found)

        return self.run(scan)

    def keys_matching(self, pattern: str) -> builtins.list[str]:
        """Every key that matches a SCAN pattern, sorted."""
        return self.run(lambda: sorted(k.decode() for k in
                                       self.client.scan_iter(match=pattern, count=1000)))

    def names_under(self, team: str, kind: str) -> builtins.list[str]:
        """The NAMEs of the keys `swarm:<team>:<kind>:NAME` (e.g. the members with a state)."""
        prefix = self.key(team, kind, "")
        return [k[len(prefix):] for k in self.keys_matching(prefix + "*")]

    def teams_without_config(self) -> builtins.list[str]:
        """Teams with member state but no `config` key: their document is gone."""
        teams = {k.split(":")[1] for k in self.keys_matching("swarm:*:state:*")}
        return sorted(teams - set(self.team_names()))

    def delete_team(self, team: str) -> int:
        """Every key under `swarm:<team>:`; returns how many went."""
        def drop() -> int:
            keys = list(self.client.scan_iter(match=self.key(team, "*"), count=1000))
            for start in range(0, len(keys), 500):
                self.client.unlink(*keys[start:start + 500])
            return len(keys)

        return self.run(drop)

    def event(self, pipe: Any, team: str, kind: str, name: str) -> None:
        """Queue one entry of the team's change feed on `pipe` (what watchers wake on)."""
        pipe.xadd(self.key(team, "events"), {"kind": kind, "name": name},
                  maxlen=EVENTS_KEPT, approximate=True)

    @contextmanager
    def locked(self, team: str, what: str, timeout: float | None = None) -> Iterator[None]:
        """A lock with an owner token and an expiry (redis-py's Lock): a holder that dies
        frees it within `expiry` seconds; only its owner can release it."""
        wait = settings.lock_timeout() if timeout is None else timeout
        lock = self.client.lock(self.key(team, "lock", what), timeout=30.0, sleep=0.002,
                                blocking_timeout=wait)
        if not self.run(lock.acquire):
            raise LockTimeoutError(f"{self.key(team, 'lock', what)} stayed locked for {wait:g}s")
        try:
            yield
        finally:
            try:
                self.run(lock.release)
            except redis.exceptions.LockError:  # it expired while held: someone else has it
                log.warning("lock %s expired while held", what)

    # -- member state and heartbeats ---------------------------------------------------------
    def _parse_state(self, raw: bytes | None) -> AgentState | None:
        from swarm.core.records.state import AgentState

        if raw is None:
            return None
        try:
            return records.decode(raw, AgentState)
        except (records.DecodeError, ValueError):
            log.warning("unreadable member state; read as none")
            return None

    def read_state(self, team: str, name: str) -> AgentState | None:
        raw: Any = self.run(lambda: self.client.get(self.key(team, "state", name)))
        return self._parse_state(raw)

    def _queue_state(self, pipe: Any, team: str, name: str, state: AgentState) -> None:
        pipe.set(self.key(team, "state", name), records.encode(state))
        # The heartbeat as a key that expires: a member whose host or process vanished has no
        # `hb` key after SWARM_HEARTBEAT_STALE seconds, whatever its state says.
        pipe.set(self.key(team, "hb", name), repr(state.heartbeat),
                 ex=max(1, round(settings.heartbeat_stale())))
        self.event(pipe, team, "state", name)

    def write_state(self, team: str, name: str, state: AgentState) -> None:
        def write() -> None:
            pipe = self.client.pipeline()
            self._queue_state(pipe, team, name, state)
            pipe.execute()

        self.run(write)

    def update_state(self, team: str, name: str, change: Callable[[AgentState], None],
                     timeout: float | None = None) -> AgentState:
        """Read-modify-write as one optimistic transaction (WATCH): a concurrent writer makes
        it start again, so neither write is lost."""
        from swarm.core.records.state import AgentState

        key = self.key(team, "state", name)
        out: list[AgentState] = []

        def apply(pipe: Any) -> None:
            state = self._parse_state(pipe.get(key)) or AgentState()
            change(state)
            pipe.multi()
            self._queue_state(pipe, team, name, state)
            out[:] = [state]

        self.run(lambda: self.client.transaction(apply, key))
        return out[0]

    def heartbeat_age(self, team: str, name: str) -> float | None:
        raw = self.run(lambda: self.client.get(self.key(team, "hb", name)))
        return None if raw is None else max(0.0, time.time() - float(raw))

    # -- doctor ------------------------------------------------------------------------------
    def server_info(self) -> dict[str, Any]:
        return dict(self.run(lambda: self.client.info()))


def _why(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact(text)[:200]
