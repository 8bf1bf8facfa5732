"""The Redis store: the store interface over one server connection (`RedisStore`)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from swarm.core.store.api import Store, Watcher
from swarm.core.store.redis.connection import RedisStore
from swarm.core.store.redis.mailbox import RedisMailbox
from swarm.core.store.redis.tasks import RedisTaskList
from swarm.core.store.redis.team import RedisTeamDocument, create_team
from swarm.core.store.redis.watch import RedisWatcher

if TYPE_CHECKING:
    from swarm.core.model.state import AgentState
    from swarm.core.store.waker import Waker


class RedisTeamStore(Store):
    kind = "redis"

    def __init__(self, connection: RedisStore) -> None:
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

    def watcher(self, team: str, inboxes: builtins.list[str] | None, tasks: bool,
                states: builtins.list[str], waker: Waker | None = None,
                reads: Sequence[str] = ()) -> Watcher:
        return RedisWatcher(self.connection, team, inboxes, tasks, states, waker, reads)
