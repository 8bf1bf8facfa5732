"""The Redis store: the store interface over one server connection (`RedisConnection`)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from swarm.core.records.names import KEY_NAMES
from swarm.core.store.api import ASIDE, Store, Watcher
from swarm.core.store.redis.connection import RedisConnection
from swarm.core.store.redis.document import RedisTeamDocument, create_team
from swarm.core.store.redis.mailbox import RedisMailbox
from swarm.core.store.redis.tasks import RedisTaskList
from swarm.core.store.redis.watch import RedisWatcher
from swarm.core.trust.secrets import redact, redact_url
from swarm.errors import SwarmError

if TYPE_CHECKING:
    from swarm.core.records.state import AgentState
    from swarm.core.store.waker import Waker


class RedisStore(Store):
    kind = "redis"
    shared = True

    def __init__(self, connection: RedisConnection) -> None:
        self.connection = connection

    def mailbox(self, team: str, name: str) -> RedisMailbox:
        return RedisMailbox(self.connection, team, name)

    def tasks(self, team: str, check_owner: Callable[[str], str] | None = None) -> RedisTaskList:
        return RedisTaskList(self.connection, team, check_owner)

    def team_document(self, team: str) -> RedisTeamDocument:
        return RedisTeamDocument(self.connection, team)

    def create_team(self, base: str, description: str, before: Callable[[str], object]) -> str:
        return create_team(self.connection, base, description, before)

    def team_names(self) -> builtins.list[str]:
        return self.connection.team_names()

    def read_state(self, team: str, name: str) -> AgentState | None:
        return self.connection.read_state(team, name)

    def write_state(self, team: str, name: str, state: AgentState) -> None:
        self.connection.write_state(team, name, state)

    def update_state(self, team: str, name: str, change: Callable[[AgentState], None],
                     timeout: float | None = None) -> AgentState:
        return self.connection.update_state(team, name, change, timeout)

    def heartbeat_age(self, team: str, name: str) -> float | None:
        return self.connection.heartbeat_age(team, name)

    def heartbeat_expired(self, team: str, name: str) -> bool:
        return self.connection.heartbeat_age(team, name) is None  # its key's TTL ran out

    def be_patient(self, say: Callable[[str], None]) -> None:
        self.connection.be_patient(say)

    def give_up_after(self, seconds: float) -> None:
        self.connection.give_up_after(seconds)

    def describe(self) -> dict[str, object]:
        """Reachable, its version, and whether it keeps an append-only file (without one a
        restart drops what the last snapshot missed)."""
        out: dict[str, object] = {"kind": self.kind, "where": redact_url(self.connection.url)}
        try:
            info = self.connection.server_info()
        except SwarmError as exc:
            return {**out, "ok": False, "error": redact(str(exc))}
        aof = bool(int(info.get("aof_enabled", 0)))
        version = str(info.get("redis_version", "?"))
        warnings = [] if aof else [
            "the server has no append-only file (appendonly no): a restart drops the messages and"
            " task changes since its last snapshot; set `appendonly yes`"
            " (docs/design/scale-out.md)"]
        return {**out, "ok": True, "version": version, "aof": aof,
                "used_memory": info.get("used_memory_human"),
                "summary": f"Redis {version} at {out['where']}", "warnings": warnings}

    def watcher(self, team: str, inboxes: builtins.list[str] | None, tasks: bool,
                states: builtins.list[str], waker: Waker | None = None,
                reads: Sequence[str] = ()) -> Watcher:
        return RedisWatcher(self.connection, team, inboxes, tasks, states, waker, reads)

    def state_names(self, team: str) -> builtins.list[str]:
        return self.connection.names_under(team, "state")

    def moved_aside(self, team: str) -> builtins.list[str]:
        return self.connection.keys_matching(self.connection.key(team, f"config{ASIDE}*"))

    def remains(self, team: str) -> bool:
        return bool(self.state_names(team) or self.moved_aside(team))

    def gone_teams(self) -> builtins.list[str]:
        return self.connection.teams_without_config()

    def _lead_key_name(self, team: str) -> str:
        return self.connection.key(team, KEY_NAMES[1])

    def lead_key(self, team: str) -> bytes | None:
        name = self._lead_key_name(team)
        raw: bytes | None = self.connection.run(lambda: self.connection.client.get(name))  # type: ignore[assignment]
        return raw

    def add_lead_key(self, team: str, key_hex: str) -> None:
        name = self._lead_key_name(team)
        self.connection.run(lambda: self.connection.client.set(name, key_hex, nx=True))

    def lead_key_location(self, team: str) -> str:
        return f"the Redis key {self._lead_key_name(team)}"
