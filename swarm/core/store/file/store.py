"""The file store: teams under `$SWARM_HOME/teams`, member state in `agents/<name>/state.json`,
and inotify watchers over those files."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from swarm.core.model.state import AgentState
from swarm.core.store import paths
from swarm.core.store.api import Store, Watcher
from swarm.core.store.disk import ensure_dir, locked, read_model, write_model
from swarm.core.store.file import team as team_file
from swarm.core.store.file.mailbox import FileMailbox
from swarm.core.store.file.tasks import FileTaskList

if TYPE_CHECKING:
    from swarm.core.store.waker import Waker


class FileStore(Store):
    kind = "file"

    def mailbox(self, team: str, name: str) -> FileMailbox:
        return FileMailbox(team, name)

    def tasks(self, team: str, check_owner: Callable[[str], str] | None = None) -> FileTaskList:
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

    def watcher(self, team: str, inboxes: builtins.list[str] | None, tasks: bool,
                states: builtins.list[str], waker: Waker | None = None,
                reads: Sequence[str] = ()) -> Watcher:
        from swarm.core.store.file.watch import FileWatcher

        targets: list[tuple[object, str | None]] = []
        if inboxes is None:
            targets.append((paths.inboxes_dir(team), None))
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
