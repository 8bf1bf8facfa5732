"""The team document on files: `teams/<team>/config.json`, changed under its lock; a send
appends to each recipient's mailbox file in turn."""

from __future__ import annotations

import builtins
import functools
import os
from collections.abc import Callable

from swarm.core.records.protocol import Message
from swarm.core.records.team_config import TeamConfig
from swarm.core.store import paths
from swarm.core.store.api import DocumentMissing, TeamDocument
from swarm.core.store.disk import ensure_dir, locked, read_model, write_model
from swarm.core.store.file.mailbox import FileMailbox
from swarm.core.store.filecache import ChangeCache, stat_key
from swarm.errors import PartialSendError, SwarmError


class FileTeamDocument(TeamDocument):
    def __init__(self, name: str) -> None:
        super().__init__(name, paths.team_dir(name))
        self.path = paths.team_config(name)

    def exists(self) -> bool:
        return self.path.exists()

    def location(self) -> str:
        return str(self.path)

    def version(self) -> object:
        return stat_key(self.path)  # a stat

    def read(self) -> TeamConfig:
        config = read_model(self.path, TeamConfig)  # a corrupt one is moved aside
        if config is None:
            raise DocumentMissing(self.location())
        return config

    def update(self, change: Callable[[TeamConfig], None]) -> TeamConfig:
        with locked(self.path):
            config = self.read()
            change(config)
            write_model(self.path, config)
        return config

    def remove(self) -> None:
        import shutil  # it loads bz2 and lzma to know what it can archive: not on every send

        shutil.rmtree(self.dir)

    def config_for_send(self, stand_in: TeamConfig | None) -> TeamConfig:
        """Parsed again only when the file changed: a script sending in a loop pays one stat
        per message instead of a parse (a missing file: the clear error)."""
        return stand_in if stand_in is not None else self._send_cache.get()

    @functools.cached_property
    def _send_cache(self) -> ChangeCache[TeamConfig]:
        return ChangeCache(self.version, self.read)

    def deliver(self, recipients: builtins.list[str],
                messages: builtins.list[Message]) -> builtins.list[str]:
        """One mailbox at a time. If a delivery fails or is interrupted part-way, say which
        recipients have the message: a send is reported as sent exactly where it landed."""
        ids: builtins.list[str] = []
        for name, message in zip(recipients, messages, strict=True):
            box = FileMailbox(self.name, name)
            try:
                box.deliver([message])
            except BaseException as exc:
                if message.id in box.delivered:  # the interrupt came after the message was in
                    ids.append(message.id)
                if not ids:
                    raise
                done = ", ".join(f"{n} (id {i})" for n, i in zip(recipients, ids, strict=False))
                rest = recipients[len(ids):]
                why = str(exc) if isinstance(exc, SwarmError) else "interrupted"
                note = f"; not to {', '.join(rest)}" if rest else ""
                raise PartialSendError(f"{why}, but the message was delivered to {done}{note}",
                                       1 if isinstance(exc, SwarmError) else 130) from exc
            ids.append(message.id)
        return ids


def create_team(base: str, description: str, before: Callable[[str], object]) -> str:
    """`teams/<name>/` made with mkdir (a clash: another name), then its document."""
    from swarm.core.records.team_config import new_config

    ensure_dir(paths.teams_dir())
    candidate = base
    for _ in range(100):
        try:
            os.mkdir(paths.team_dir(candidate), 0o700)
            break
        except FileExistsError:
            import secrets  # hmac and OpenSSL load with it: only on a name clash

            candidate = f"{base[:58]}-{secrets.token_hex(2)}"
    else:  # pragma: no cover - 100 clashes of 16 random bits
        raise SwarmError(f"could not find a free name for team {base!r}")
    for sub in (paths.inboxes_dir(candidate), paths.tasks_dir(candidate)):
        ensure_dir(sub)
    before(candidate)
    write_model(paths.team_config(candidate), new_config(candidate, description))
    return candidate


def team_names() -> builtins.list[str]:
    root = paths.teams_dir()
    if not root.is_dir():
        return []
    return [p.name for p in sorted(root.iterdir()) if (p / "config.json").is_file()]
