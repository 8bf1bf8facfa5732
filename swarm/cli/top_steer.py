"""The keys of `swarm top` that steer the selected member (cli.top_app mixes them in): a
message, interrupt, a shutdown request, kill, wake, a new mode. Each calls the operation its
CLI command calls, after that command's check of who may (the app's `_act`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text

from swarm.cli import top_screens
from swarm.cli.caller import current_agent_name
from swarm.cli.common import mode_cap
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import ShutdownRequest
from swarm.core.team.team import Team
from swarm.core.text.terminal import visible_line
from swarm.ops.member.control import interrupt, interrupted_line, kill, set_mode
from swarm.ops.member.restart import wake


class Steering:
    if TYPE_CHECKING:  # the app's, used here
        team: Team

        def selected(self) -> str | None: ...
        def say(self, line: str) -> None: ...
        def _act(self, path: str, params: dict[str, Any], act: Callable[[], str]) -> None: ...
        def _may(self, path: str, params: dict[str, Any]) -> bool: ...
        def _ask_line(self, prompt: str, then: Callable[[str], object],
                      value: str = "") -> None: ...

    def action_message(self, everyone: bool = False) -> None:
        to = "*" if everyone else self.selected()
        if to is None:
            return
        who = current_agent_name() or LEAD_NAME

        def send(text: str) -> None:
            if text.strip():
                self._act("send", {}, lambda: (self.team.send(to, text, sender=who), (
                    f"sent to {to}"))[1])

        self._ask_line(f"Message to {to}:", send)

    def action_message_all(self) -> None:
        self.action_message(everyone=True)

    def action_interrupt(self) -> None:
        if (name := self.selected()) is not None:
            self._act("interrupt", {"name": name},
                      lambda: interrupted_line(interrupt(self.team, name)))

    def action_shutdown(self) -> None:
        """`swarm shutdown NAME` without its wait: the answer and the exit come through the
        store like any change."""
        if (name := self.selected()) is None:
            return

        def ask() -> str:
            self.team.send(name, ShutdownRequest(), sender=LEAD_NAME)  # type: ignore[arg-type]
            return f"asked {name} to shut down"

        self._act("shutdown", {"names": (name,)}, ask)

    def action_wake(self) -> None:
        """`swarm respawn NAME` for one that stopped: started again with its transcript."""
        if (name := self.selected()) is not None:
            self._act("respawn", {"name": name},
                      lambda: wake(self.team, name, revive_dead=True).describe())

    def action_mode(self) -> None:
        name = self.selected()
        if name is None or not self._may("mode", {"name": name}):
            return

        def change(mode: str) -> None:
            if mode.strip():
                self._act("mode", {"name": name}, lambda: _mode_set(self.team, name, mode))

        self._ask_line(f"New permission mode for {name} (default, acceptEdits, plan, "
                       "bypassPermissions):", change)

    def action_kill(self) -> None:
        name = self.selected()
        if name is None or not self._may("kill", {"name": name}):
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self._act("kill", {"name": name}, lambda: kill(self.team, name).describe())
            else:
                self.say(f"{name} not killed")

        cast(Any, self).push_screen(top_screens.Confirm(Text(visible_line(
            f"Kill {name} now? Its tasks go back to pending."))), answer)



def _mode_set(team: Team, name: str, mode: str) -> str:
    set_mode(team, name, mode.strip(), cap=mode_cap(team))
    return f"told {name} to work in {mode.strip()} mode, from its next tool call"
