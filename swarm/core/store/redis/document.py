"""The team on Redis: the team file is `swarm:<team>:config` (JSON), changed under a lock with
an owner token and an expiry; `...:config:v` counts its versions (what caches compare). A team
is created by SET NX, so two hosts creating the same name get two teams, as on files. What
stays on the agent's host (transcripts, logs, worktrees) is under `paths.local_team_dir`.

A send is one request: the handle keeps the team file it last read with its version
(read together, in one MULTI), checks members against it, and one script appends the messages
to the recipients' streams and the change feed only if the version is still that one. When the
team file changed in between, the script writes nothing and the send starts again on the new
file: a member removed elsewhere never gets a mailbox, one added is reachable at once.
"""

from __future__ import annotations

import builtins
import secrets
import shutil
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from swarm.core.records import base as records
from swarm.core.records.protocol import Message
from swarm.core.records.team_config import TeamConfig, new_config
from swarm.core.store import paths
from swarm.core.store.api import DocumentMissing, TeamDocument
from swarm.core.store.disk import warn
from swarm.core.store.redis.connection import EVENTS_KEPT, RedisConnection
from swarm.errors import SwarmError, TeamBusyError, UnknownRecipientError

# KEYS: the team file's version, the change feed, then one stream per recipient. ARGV: the
# version the sender checked against, the feed's length, then per recipient its name and its
# message. Returns 0 (nothing written) when the team file changed since, else 1. The first
# write is where the server refuses a script at maxmemory: all of it or nothing.
_SEND = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
for i = 3, #KEYS do
  redis.call('XADD', KEYS[i], '*', 'm', ARGV[2 * i - 2])
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'kind', 'inbox', 'name', ARGV[2 * i - 3])
end
return 1
"""
# KEYS: the team file, where to move it. ARGV: the value a reader could not parse. Moves that
# value only: every agent and command reads the team file, so many may race to move one corrupt
# value, and one may have read it before a good one was written in its place.
_SET_ASIDE = """
local now = redis.call('GET', KEYS[1])
if now ~= ARGV[1] then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
"""
SEND_TRIES = 20  # the team file changed under this many sends in a row: say so


class _Stale(Exception):
    """The team file changed between the checks and the write: nothing was written."""


class RedisTeamDocument(TeamDocument):
    def __init__(self, connection: RedisConnection, name: str) -> None:
        super().__init__(name, paths.local_team_dir(name))
        self.connection = connection
        self.key = connection.key(name, "config")
        self.version_key = connection.key(name, "config", "v")
        # The team file as last read and its version: what a send checks against (the send
        # script refuses a stale one). Per thread, the version the checks of a send used.
        self._known: tuple[str, TeamConfig] | None = None
        self._checked = threading.local()
        self._send_script = connection.script(_SEND)
        self._set_aside_script = connection.script(_SET_ASIDE)

    def remove(self) -> None:
        self.connection.delete_team(self.name)
        if self.dir.is_dir():
            shutil.rmtree(self.dir)

    def exists(self) -> bool:
        return bool(self.connection.run(lambda: self.connection.client.exists(self.key)))

    def location(self) -> str:
        return self.key

    def version(self) -> object:
        return self.connection.run(lambda: self.connection.client.get(self.version_key))

    def set_aside(self, raw: bytes, why: str = "") -> bool:
        """Move the team file aside if it is still `raw`; False when it is not (another reader
        moved it, or a good one was written since)."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = f"{self.key}.corrupt-{stamp}"
        if not self.connection.run(
                lambda: self._set_aside_script(keys=[self.key, aside], args=[raw])):
            return False
        warn(f"{self.key} could not be parsed ({why}); moved aside to {aside}")
        return True

    def read(self) -> TeamConfig:
        """The team file and its version, read together (one request); kept for sends. A
        corrupt one is moved aside and reads as missing."""
        def read() -> Any:
            pipe = self.connection.client.pipeline(transaction=True)
            pipe.get(self.key)
            pipe.get(self.version_key)
            return pipe.execute()

        for _ in range(3):
            raw, version = self.connection.run(read)
            if raw is None:
                raise DocumentMissing(self.key)
            try:
                config = records.decode(raw, TeamConfig)
            except (records.DecodeError, ValueError) as exc:
                if self.set_aside(raw, str(exc).splitlines()[0]):
                    raise DocumentMissing(self.key) from None
                continue  # moved by another reader, or rewritten since: read what is there now
            self._known = (_text(version), config)
            return config
        raise DocumentMissing(self.key)

    # -- sending: one request ----------------------------------------------------------------
    def config_for_send(self, stand_in: TeamConfig | None) -> TeamConfig:
        known = self._known
        self._checked.fresh = known is None
        if stand_in is not None:  # a salvaged team: its stand-in, as Team.send uses it
            self._checked.version = known[0] if known else ""
            return stand_in
        if known is None:
            self.read()
            known = self._known
            assert known is not None
        self._checked.version = known[0]
        return known[1]

    def sending(self, send: Callable[[], builtins.list[str]]) -> builtins.list[str]:
        for _ in range(SEND_TRIES):
            try:
                return send()
            except _Stale:
                self._known = None  # read the team file again and check again
            except UnknownRecipientError:
                if getattr(self._checked, "fresh", True):
                    raise
                self._known = None  # a member added since this handle last read the file
        raise TeamBusyError(f"the team file of {self.name!r} changed under {SEND_TRIES} sends in "
                            "a row; nothing was sent, try again")

    def deliver(self, recipients: builtins.list[str],
                messages: builtins.list[Message]) -> builtins.list[str]:
        """Every recipient's message in one script: all land or none (a broadcast too)."""
        keys = [self.version_key, self.connection.key(self.name, "events"),
                *(self.connection.key(self.name, "inbox", n) for n in recipients)]
        args: builtins.list[object] = [self._checked.version, EVENTS_KEPT]
        for name, message in zip(recipients, messages, strict=True):
            args += [name, records.encode(message)]
        if not self.connection.run(lambda: self._send_script(keys=keys, args=args)):
            raise _Stale
        return [m.id for m in messages]

    def update(self, change: Callable[[TeamConfig], None]) -> TeamConfig:
        with self.connection.locked(self.name, "config"):
            config = self.read()
            change(config)
            data = records.encode(config)

            def write() -> Any:
                pipe = self.connection.client.pipeline(transaction=True)
                pipe.set(self.key, data)
                pipe.incr(self.version_key)
                self.connection.event(pipe, self.name, "config", "")
                return pipe.execute()

            version = self.connection.run(write)[1]
            self._known = (str(version), config)
        return config


def create_team(connection: RedisConnection, base: str, description: str,
                before: Callable[[str], object]) -> str:
    """SET NX on the document's key: a name taken (on any host) moves on to another."""
    candidate = base
    for _ in range(100):
        data = records.encode(new_config(candidate, description))
        key = connection.key(candidate, "config")
        # Before the team file, so no team is seen without its key (NX: a name already
        # taken keeps its own key, and this loop moves on to another name).
        before(candidate)
        if connection.run(lambda k=key, d=data: connection.client.set(k, d, nx=True)):  # type: ignore[misc]
            connection.run(lambda c=candidate: connection.client.incr(connection.key(c, "config", "v")))  # type: ignore[misc]
            return candidate
        candidate = f"{base[:58]}-{secrets.token_hex(2)}"
    raise SwarmError(f"could not find a free name for team {base!r}")  # pragma: no cover


def _text(version: bytes | None) -> str:
    return "" if version is None else version.decode()
