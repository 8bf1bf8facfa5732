"""The `swarm top` screen (Textual; no other module imports it): it renders the `TeamView`s the
store feed (ops.top.Feed, in a daemon thread) posts, and each key calls the operation the CLI
calls for the same act, after the same check of who may (cli.authority); a refusal or a result
is one line on screen. A timer redraws the elapsed times from the last view: it never reads the
store. Team data is always given to widgets as `Text` made visible, never as markup."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Footer, OptionList, RichLog, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from swarm.cli import authority, top_screens, top_tabs
from swarm.cli.common import mode_cap
from swarm.cli.permissions import DENIED
from swarm.cli.top_steer import Steering
from swarm.cli.top_text import header_line, member_table, request_line
from swarm.core.team import attention
from swarm.core.team.team import Team
from swarm.core.text.terminal import visible, visible_line
from swarm.errors import SwarmError
from swarm.ops import approvals
from swarm.ops.top import GROUPS, Feed, RequestRow, TeamView

W = TypeVar("W", bound=Widget)
TABS = ("output", "tasks", "mail", "diff", "info")

def _while_shown(method: Callable[..., None]) -> Callable[..., None]:
    """A drawing method that does nothing once the app is closing (its widgets are removed
    while the clock's timer or a last view may still call it)."""
    @functools.wraps(method)
    def draw(self: TopApp, *args: Any) -> None:
        if self.screen_stack:
            with contextlib.suppress(NoMatches):
                method(self, *args)

    return draw


class ViewChanged(Message):
    def __init__(self, view: TeamView) -> None:
        super().__init__()
        self.view = view


class TopApp(Steering, App[None]):
    TITLE = "swarm top"
    CSS = top_screens.SCREEN_CSS
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "quit"), Binding("ctrl+c", "quit", show=False, priority=True),
        Binding("j", "move(1)", show=False), Binding("k", "move(-1)", show=False),
        Binding("tab", "next_tab", show=False, priority=True),
        *(Binding(str(i + 1), f"tab('{t}')", show=False) for i, t in enumerate(TABS)),
        Binding("y", "approve", "approve"), Binding("n", "deny", "deny"),
        Binding("N,shift+n", "deny_why", "deny why", show=False),
        Binding("a", "always", "always"), Binding("Y,shift+y", "approve_alike", show=False),
        Binding("p", "plan", "plan"), Binding("m", "message", "msg"),
        Binding("asterisk", "message_all", show=False), Binding("i", "interrupt", show=False),
        Binding("X,shift+x", "kill", show=False), Binding("x", "shutdown", show=False),
        Binding("r", "wake", show=False), Binding("M,shift+m", "mode", show=False),
        Binding("slash", "filter", "filter"),
        Binding("question_mark", "help", "keys"),
    ]

    def __init__(self, team: Team, clock: Callable[[], float] = time.time,
                 blink: bool = True) -> None:
        super().__init__()
        self.team = team
        self.clock = clock
        self.blink = blink
        self.view: TeamView | None = None
        self.filter = ""
        self.last_line = ""
        self.filled: tuple[int, str, str] | None = None  # the view, member and tab shown
        self.log_at: tuple[str | None, int | None] = (None, None)  # the Output tab's member, end
        self.alerted: set[str] = set()  # requests seen (each rings at most once)
        self.alerts = 0  # requests rung for while the terminal was not focused
        self.feed = Feed(team, self._post_view)

    # -- layout and the feed -------------------------------------------------------------------
    def main(self, selector: str, kind: type[W]) -> W:
        """A widget of the main screen (`query_one` would look in a dialog on top of it)."""
        return self.screen_stack[0].query_one(selector, kind)

    def compose(self) -> ComposeResult:
        yield Static(Text(f"team {self.team.name} · reading..."), id="head")
        yield Static(Text(""), id="cols")
        yield OptionList(id="members")
        yield Static(Text(""), id="bar")
        yield Static(Text(""), id="line")
        with TabbedContent(id="tabs"):
            for tab in TABS:
                with TabPane(tab.capitalize(), id=tab):
                    if tab == "output":
                        yield RichLog(max_lines=top_tabs.LOG_LINES, wrap=True, min_width=20,
                                      markup=False, id="log")
                    else:
                        yield Static(Text(""), id=f"{tab}-text")
        yield Footer()

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):  # leave the terminal as it was, not raw
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.exit)
        threading.Thread(target=self.feed.run, name="swarm-top-feed", daemon=True).start()
        self.set_interval(1.0, self._redraw_members)  # the clocks only: no store read
        self.main("#members", OptionList).focus()

    def on_unmount(self) -> None:
        self.feed.stop()

    def _post_view(self, view: TeamView) -> bool:
        return self.post_message(ViewChanged(view))

    def on_view_changed(self, event: ViewChanged) -> None:
        first = self.view is None
        self.view = event.view
        self._redraw()
        new = [r for r in event.view.requests if r.request_id not in self.alerted]
        self.alerted.update(r.request_id for r in new)
        if new and not first and not self.app_focus:  # you look elsewhere: once per request
            self.bell()
            self.alerts += len(new)
            for request in new:
                attention.notify(attention.Alert(
                    team=self.team.name, sender=request.sender,
                    kind=f"{request.kind}_request" if request.kind == "permission"
                    else "plan_approval_request", request_id=request.request_id,
                    text=request.what, answer=(
                        f"swarm permissions approve {request.request_id[:8]}"
                        if request.kind == "permission"
                        else f"swarm plans approve {request.sender}")))

    # -- drawing --------------------------------------------------------------------------------
    def selected(self) -> str | None:
        option = self.main("#members", OptionList).highlighted_option
        return option.id if option is not None and option.id and ":" not in option.id else None

    def _shown(self) -> list[Any]:
        if self.view is None:
            return []
        return [m for m in self.view.members if self.filter.lower() in m.name.lower()]

    @_while_shown
    def _redraw(self) -> None:
        if self.view is None:
            return
        head = header_line(self.view) + (f" · filter: {visible_line(self.filter)}"
                                         if self.filter else "")
        self.main("#head", Static).update(Text(head))
        self._redraw_members()
        self._redraw_bar()
        self.call_after_refresh(self._fill_tabs)  # the list and the bar are painted first

    @_while_shown
    def _redraw_members(self) -> None:
        if self.view is None:
            return
        members = self._shown()
        widget = self.main("#members", OptionList)
        lines = member_table(members, self.clock(), max(widget.size.width - 2, 20))
        self.main("#cols", Static).update(Text("   " + lines[0] if lines else ""))
        keep = self.selected()
        options: list[Option] = []
        for key, title in GROUPS.items():
            rows = [(m, lines[i + 1]) for i, m in enumerate(members) if m.group == key]
            if not rows:
                continue
            options.append(Option(Text(f"{title} ({len(rows)})", style="bold"),
                                  id=f"group:{key}", disabled=True))
            for member, line in rows:
                style = "bold" if key == "needs" else ("dim" if key == "gone" else "")
                options.append(Option(Text("  " + line, style=style), id=member.name))
        if not options:
            options.append(Option(Text("(no members)"), id="group:none", disabled=True))
        widget.set_options(options)
        ids = [o.id for o in options if not o.disabled and o.id]
        if ids:
            widget.highlighted = widget.get_option_index(keep if keep in ids else ids[0])

    def request(self, kind: str | None = "permission") -> RequestRow | None:
        """The request in the bar: the selected member's, else the oldest."""
        if self.view is None:
            return None
        waiting = [r for r in self.view.requests if kind is None or r.kind == kind]
        mine = [r for r in waiting if r.sender == self.selected()]
        return (mine or waiting or [None])[0]  # type: ignore[list-item]

    @_while_shown
    def _redraw_bar(self) -> None:
        bar = self.main("#bar", Static)
        found = self.request(None)
        bar.set_class(found is not None, "waiting")
        if found is None or self.view is None:
            bar.update(Text(""))
            return
        more = len(self.view.requests) - 1
        keys = "p: plan" if found.kind == "plan" else "y approve · n deny · N why · a always"
        text = Text(f"{request_line(found)}", style="bold")
        text.append(f"\n{keys}" + (f" · {more} more waiting" if more else ""), style="")
        bar.update(text)

    @_while_shown
    def say(self, line: str) -> None:
        """The one-line message: a result, or a refusal naming who may."""
        self.last_line = visible_line(line.strip().split("\n")[0])
        self.main("#line", Static).update(Text(self.last_line))

    # -- the selected member's tabs (read on a change of the team or of the selection) -------
    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._redraw_bar()
        self._fill_tabs()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._fill_tabs()

    @_while_shown
    def _fill_tabs(self) -> None:
        """Read what the tab shows, once per view, member and tab (the clock's redraws of the
        list highlight the same row again: no read)."""
        name = self.selected()
        tab = self.main("#tabs", TabbedContent).active
        if name is None or self.view is None or self.filled == (id(self.view), name, tab):
            return
        self.filled = (id(self.view), name, tab)
        if tab == "output":
            self._fill_output(name)
        elif tab == "diff":
            self._fill_diff(name)
        else:
            row = self.view.member(name)
            text = {"tasks": lambda: top_tabs.tasks_text(self.team, name),
                    "mail": lambda: top_tabs.mail_text(self.team, name),
                    "info": lambda: top_tabs.info_text(self.team, row, name)}[tab]()
            self.main(f"#{tab}-text", Static).update(Text(visible(text)))

    def _fill_output(self, name: str) -> None:
        """The end of its log; for the same member again, only what was added since."""
        log = self.main("#log", RichLog)
        offset = self.log_at[1] if self.log_at[0] == name else None
        found = top_tabs.log_lines(self.team, name, offset)
        if offset is None or found is None or found.restarted:
            log.clear()
        if found is None:
            log.write(Text("(no output yet)", style="dim"))
            self.log_at = (name, None)
            return
        for line in found.lines:
            log.write(Text.from_ansi(visible(line, styles=True)))
        self.log_at = (name, found.end)

    @work(thread=True, exclusive=True, group="diff")
    def _fill_diff(self, name: str) -> None:
        text = Text(visible(top_tabs.diff_text(self.team, name)))
        self.call_from_thread(lambda: self.main("#diff-text", Static).update(text))

    # -- keys -------------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        widget = self.main("#members", OptionList)
        (widget.action_cursor_down if step > 0 else widget.action_cursor_up)()

    def action_tab(self, tab: str) -> None:
        self.main("#tabs", TabbedContent).active = tab

    def action_next_tab(self) -> None:
        tabs = self.main("#tabs", TabbedContent)
        tabs.active = TABS[(TABS.index(tabs.active) + 1) % len(TABS)] if tabs.active else TABS[0]

    def action_help(self) -> None:
        self.push_screen(top_screens.Help())

    def _act(self, path: str, params: dict[str, Any], act: Callable[[], str]) -> None:
        """Check who may (as the CLI does), then act in a worker; the outcome is one line."""
        if self._may(path, params):
            self._run(act)

    def _may(self, path: str, params: dict[str, Any]) -> bool:
        """Whether this shell may do what `swarm PATH` does (cli.authority); else says why."""
        try:
            authority.check(path, params)
        except SwarmError as exc:
            self.say(str(exc))
            return False
        return True

    @work(thread=True, group="act")
    def _run(self, act: Callable[[], str]) -> None:
        try:
            line = act()
        except SwarmError as exc:
            line = str(exc)
        self.call_from_thread(self.say, line)
        self.feed.refresh()

    def _asked(self, kind: str = "permission") -> RequestRow | None:
        found = self.request(kind)
        if found is None:
            self.say(f"no {'plan' if kind == 'plan' else 'request'} is waiting")
        return found

    def action_approve(self) -> None:
        if (found := self._asked()) is not None:
            self._act("permissions approve", {}, lambda: top_screens.approved(
                approvals.approve_permission(self.team, found.request_id)))

    def action_deny(self, reason: str = DENIED) -> None:
        if (found := self._asked()) is not None:
            self._act("permissions deny", {}, lambda: top_screens.denied(
                approvals.deny_permission(self.team, found.request_id, reason)))

    def action_deny_why(self) -> None:
        if self._asked() is not None:
            self._ask_line("Why deny it (the teammate's model reads it)?",
                           lambda why: self.action_deny(why) if why.strip() else None)

    def action_always(self) -> None:
        found = self._asked()
        if found is None:
            return
        if not self._may("permissions approve", {"always": True}):
            return
        try:
            rule = approvals.always_rule(self.team, found.request_id)
        except SwarmError as exc:
            self.say(str(exc))
            return
        question = Text(visible_line(
            f"Add the team rule {rule} (scope: every teammate of team {self.team.name}, "
            f"from now on) and approve {found.sender}'s call?"))

        def answer(yes: bool | None) -> None:
            if yes:
                self._act("permissions approve", {"always": True}, lambda: top_screens.approved(
                    approvals.approve_permission(self.team, found.request_id, always=True),
                    f" and added team rule {rule}"))
            else:
                self.say("nothing added, nothing answered")

        self.push_screen(top_screens.Confirm(question), answer)

    def action_approve_alike(self) -> None:
        if (found := self._asked()) is None:
            return

        def act() -> str:
            done = [approvals.approve_permission(self.team, p.request.request_id)
                    for p in approvals.alike(self.team, found.request_id)]
            names = ", ".join(p.message.sender for p in done)
            return f"approved {found.tool} for {len(done)}: {names}"

        self._act("permissions approve", {}, act)

    def action_plan(self) -> None:
        found = self._asked("plan")
        if found is None:
            return
        cap = mode_cap(self.team)
        question = Text(visible_line(f"{found.sender}'s plan:") + "\n" +
                        visible((found.plan or "")[:1500]) + "\n\nApprove it?")

        def answer(yes: bool | None) -> None:
            if yes:
                self._act("plans approve", {}, lambda: top_screens.planned(
                    approvals.answer_plan(self.team, found.sender, True, cap=cap)))
            else:
                self._ask_line("Feedback for the rejected plan:", lambda why: self._act(
                    "plans reject", {}, lambda: top_screens.planned(approvals.answer_plan(
                        self.team, found.sender, False, why, cap=cap))) if why.strip() else None)

        self.push_screen(top_screens.Confirm(question), answer)

    def action_filter(self) -> None:
        def apply(text: str) -> None:
            self.filter = text.strip()
            self._redraw()

        self._ask_line("Show members whose name has (empty: all):", apply, self.filter)

    def _ask_line(self, prompt: str, then: Callable[[str], object], value: str = "") -> None:
        def done(text: str | None) -> None:
            if text is not None:
                then(text)

        self.push_screen(top_screens.Field(Text(visible_line(prompt)), value, self.blink), done)


def run_app(team: Team) -> None:
    TopApp(team).run()
