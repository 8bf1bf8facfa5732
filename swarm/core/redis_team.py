"""The team on Redis: the team file is `swarm:<team>:config` (JSON), changed under a lock with
an owner token and an expiry; `...:config:v` counts its versions (what caches compare). A team
is created by SET NX, so two hosts creating the same name get two teams, as on files. What
stays on the agent's host (transcripts, logs, worktrees) is under `paths.local_team_dir`.
"""

from __future__ import annotations

import builtins
import secrets
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from swarm.core import lead_key, paths, records, stores
from swarm.core.names import LEAD_NAME, agent_id, validate_team_name
from swarm.core.redis_store import RedisStore
from swarm.core.store import warn
from swarm.core.team import Member, Team, TeamConfig
from swarm.core.team_gone import gone_error
from swarm.errors import SwarmError


def _store() -> RedisStore:
    store = stores.remote()
    assert store is not None
    return store


class RedisTeam(Team):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.dir = paths.local_team_dir(name)
        self.store = _store()
        self.config_key_name = self.store.key(name, "config")
        self.version_key = self.store.key(name, "config", "v")

    def __repr__(self) -> str:
        return f"RedisTeam({self.name!r})"

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def create(cls, name: str, description: str = "") -> Team:
        base = validate_team_name(name)
        store = _store()
        candidate = base
        for _ in range(100):
            lead = agent_id(LEAD_NAME, candidate)
            config = TeamConfig(name=candidate, description=description, lead_agent_id=lead,
                                members=[Member(agent_id=lead, name=LEAD_NAME,
                                                agent_type="team-lead", color="white")])
            data = records.encode(config)
            key = store.key(candidate, "config")
            # Before the team file, so no team is seen without its key (NX: a name already
            # taken keeps its own key, and this loop moves on to another name).
            lead_key.create_key(candidate)
            if store.run(lambda k=key, d=data: store.client.set(k, d, nx=True)):  # type: ignore[misc]
                store.run(lambda c=candidate: store.client.incr(store.key(c, "config", "v")))  # type: ignore[misc]
                return Team(candidate)
            candidate = f"{base[:58]}-{secrets.token_hex(2)}"
        raise SwarmError(f"could not find a free name for team {base!r}")  # pragma: no cover

    @classmethod
    def list(cls) -> builtins.list[Team]:
        return [Team(name) for name in _store().team_names()]

    def _remove(self) -> None:
        self.store.delete_team(self.name)
        if self.dir.is_dir():
            shutil.rmtree(self.dir)

    def exists(self) -> bool:
        return bool(self.store.run(lambda: self.store.client.exists(self.config_key_name)))

    def document(self) -> str:
        return self.config_key_name

    def config_key(self) -> object:
        return self.store.run(lambda: self.store.client.get(self.version_key))

    # -- the team file -----------------------------------------------------------------------
    def _parse(self, raw: bytes | None) -> TeamConfig:
        if raw is None:
            raise gone_error(self.name, self.document())
        try:
            return records.decode(raw, TeamConfig)
        except (records.DecodeError, ValueError) as exc:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            aside = f"{self.config_key_name}.corrupt-{stamp}"
            self.store.run(lambda: self.store.client.rename(self.config_key_name, aside))
            warn(f"{self.config_key_name} could not be parsed ({str(exc).splitlines()[0]}); "
                 f"moved aside to {aside}")
            raise gone_error(self.name, self.document()) from None

    def config(self) -> TeamConfig:
        if self._stand_in is not None:
            return self._stand_in
        raw: Any = self.store.run(lambda: self.store.client.get(self.config_key_name))
        return self._parse(raw)

    def update(self, change: Callable[[TeamConfig], None]) -> TeamConfig:
        self._refuse_stand_in()
        with self.store.locked(self.name, "config"):
            config = self.config()
            change(config)
            data = records.encode(config)

            def write() -> None:
                pipe = self.store.client.pipeline(transaction=True)
                pipe.set(self.config_key_name, data)
                pipe.incr(self.version_key)
                self.store.event(pipe, self.name, "config", "")
                pipe.execute()

            self.store.run(write)
        return config
