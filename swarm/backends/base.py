"""The `PaneBackend` protocol (typing only). Each implementation lives in its own module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class PaneBackend(Protocol):
    """Somewhere a teammate process runs and (maybe) shows its output.

    `create_pane` makes the place; `run_in_pane` starts the agent there as the pane's own
    process (never typed keystrokes) and returns its pid when the backend knows it.
    `kill_pane` closes only a pane this backend created for the team; `close_team` (team
    delete) closes what is left of the team there and returns how many it closed.
    """

    type: str

    def is_available(self) -> bool: ...

    def is_running_inside(self) -> bool: ...

    def create_pane(self, name: str, color: str | None) -> str: ...

    def run_in_pane(
        self, pane_id: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> int | None: ...

    def kill_pane(self, pane_id: str) -> bool: ...

    def is_pane_alive(self, pane_id: str) -> bool: ...

    def close_team(self) -> int: ...
