"""The file store: teams under `$SWARM_HOME/teams`, member state in `agents/<name>/state.json`,
and inotify watchers over those files."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from swarm.core.records.names import KEY_FILE
from swarm.core.records.state import AgentState
from swarm.core.store import paths
from swarm.core.store.api import ASIDE, Store, Watcher
from swarm.core.store.disk import ensure_dir, locked, read_model, write_model
from swarm.core.store.file import document as team_file
from swarm.core.store.file.mailbox import FileMailbox

if TYPE_CHECKING:
    from swarm.core.store.file.tasks import FileTaskList
    from swarm.core.store.waker import Waker


class FileStore(Store):
    kind = "file"
    shared = False

    def mailbox(self, team: str, name: str) -> FileMailbox:
        return FileMailbox(team, name)

    def tasks(self, team: str, check_owner: Callable[[str], str] | None = None) -> FileTaskList:
        from swarm.core.store.file.tasks import FileTaskList  # not on a send's path

        return FileTaskList(team, check_owner)

    def team_document(self, team: str) -> team_file.FileTeamDocument:
        return team_file.FileTeamDocument(team)

    def create_team(self, base: str, description: str, before: Callable[[str], object]) -> str:
        return team_file.create_team(base, description, before)

    def team_names(self) -> builtins.list[str]:
        return team_file.team_names()

    def read_state(self, team: str, name: str) -> AgentState | None:
        return read_model(paths.agent_state(team, name), AgentState)

    def write_state(self, team: str, name: str, state: AgentState) -> None:
        ensure_dir(paths.agent_dir(team, name))
        write_model(paths.agent_state(team, name), state)

    def update_state(self, team: str, name: str, change: Callable[[AgentState], None],
                     timeout: float | None = None) -> AgentState:
        path = paths.agent_state(team, name)
        ensure_dir(path.parent)
        with locked(path, timeout):
            state = read_model(path, AgentState) or AgentState()
            change(state)
            write_model(path, state)
        return state

    def heartbeat_age(self, team: str, name: str) -> float | None:
        return None  # a local process: its pid and start time say whether it lives

    def describe(self) -> dict[str, object]:
        where = str(paths.teams_dir())
        return {"kind": self.kind, "ok": True, "where": where, "summary": f"files under {where}",
                "warnings": []}

    def watcher(self, team: str, inboxes: builtins.list[str] | None, tasks: bool,
                states: builtins.list[str], waker: Waker | None = None,
                reads: Sequence[str] = ()) -> Watcher:
        from swarm.core.store.file.watch import FileWatcher

        targets: list[tuple[object, str | None]] = []
        if inboxes is None:  # a team-wide watcher: members joining or leaving too (as Redis's)
            targets += [(paths.inboxes_dir(team), None), (paths.team_dir(team), "config.json")]
        else:
            targets += [(paths.inboxes_dir(team), paths.inbox(team, n).name) for n in inboxes]
        # A reader rewrites its mailbox file (by rename) when it marks messages read.
        targets += [(paths.inboxes_dir(team), paths.inbox(team, n).name) for n in reads
                    if inboxes is not None and n not in inboxes]
        if tasks:
            targets.append((paths.tasks_dir(team), None))
        for name in states:
            directory = paths.agent_dir(team, name)
            if directory.is_dir():
                targets.append((directory, "state.json"))
        return FileWatcher(targets, waker)  # type: ignore[arg-type]

    def state_names(self, team: str) -> builtins.list[str]:
        agents = paths.local_team_dir(team) / "agents"
        try:
            return sorted(p.parent.name for p in agents.glob("*/state.json"))
        except OSError:
            return []

    def moved_aside(self, team: str) -> builtins.list[str]:
        try:
            return sorted(str(p) for p in paths.team_dir(team).glob(f"config.json{ASIDE}*"))
        except OSError:
            return []

    def remains(self, team: str) -> bool:
        return bool(self.state_names(team) or self.moved_aside(team)
                    or paths.team_dir(team).is_dir())

    def gone_teams(self) -> builtins.list[str]:
        try:
            dirs = sorted(p for p in paths.teams_dir().iterdir() if p.is_dir())
        except OSError:
            return []
        return [d.name for d in dirs
                if not (d / "config.json").exists() and self.state_names(d.name)]

    def lead_key(self, team: str) -> bytes | None:
        try:
            return (paths.team_dir(team) / KEY_FILE).read_bytes()
        except FileNotFoundError:
            return None

    def add_lead_key(self, team: str, key_hex: str) -> None:
        try:
            fd = os.open(paths.team_dir(team) / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o600)
        except FileExistsError:
            return
        with os.fdopen(fd, "w") as f:
            f.write(key_hex + "\n")

    def lead_key_location(self, team: str) -> str:
        return str(paths.team_dir(team) / KEY_FILE)
