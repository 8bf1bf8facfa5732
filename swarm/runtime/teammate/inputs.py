"""A teammate's inputs: what it handles next, and how the model sees it.

Their order: a shutdown request first, then the lead's messages, then peers' (oldest first),
then a background subagent's end, then the next task it can claim. Out of turns or budget, the
messages stay unread (a respawn with a new limit handles them) and its status says why.
Messages that arrive during a turn reach the model at its next call (`arrivals`); those already
waiting when the turn began keep their place in the order, and a shutdown request waits for
the turn's end. A message is in the conversation (and transcript) before it is marked read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from msgspec import Struct

from swarm import settings
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import (
    Message,
    ModeChange,
    ShutdownRequest,
    StructuredMessage,
    escape,
    render_for_model,
)
from swarm.core.records.state import AgentState
from swarm.core.records.task import Task
from swarm.core.store import select as stores
from swarm.core.store.api import Mailbox, Watcher
from swarm.core.store.waker import Waker
from swarm.core.team.lead_key import LeadSeal, is_order
from swarm.core.team.team import Team
from swarm.core.text.readable import structured_line
from swarm.runtime.teammate.console import Console, brief

Block = dict[str, Any]


class Arrivals(Protocol):
    """What a teammate's subagents hand its inputs: their ends and messages (the runner,
    `swarm.runtime.subagents.runner.Subagents`), and what wakes it when one comes."""

    waker: Waker

    def has_arrivals(self) -> bool: ...

    def take_arrivals(self) -> list[Block]: ...


class Inbound(Struct, dict=True):
    """A message as read: its structured kind, already checked against who sent it and, for
    the lead's orders, the lead's signature (`seal`): a forged or unauthorised structured
    message has no kind, it is plain text from its sender."""

    message: Message
    kind: StructuredMessage | None

    @classmethod
    def read(cls, message: Message, seal: LeadSeal) -> Inbound:
        kind = message.structured()
        if kind is not None and not seal.allows(kind, message):
            kind = None
        return cls(message, kind)


def _unsigned_note(item: Inbound) -> str:
    """What the model is told of an order that claims the lead but lacks its signature."""
    if item.kind is not None or item.message.sender != LEAD_NAME:
        return ""
    claimed = item.message.structured()
    if not is_order(claimed):
        return ""
    return (f"<system-note>This {claimed.type if claimed else 'order'} says it is from "
            f"{LEAD_NAME} but does not carry the lead's signature: it was not applied and is not"
            " the lead's order.</system-note>")


def is_shutdown(item: Inbound) -> bool:
    return isinstance(item.kind, ShutdownRequest)


class Status(Protocol):
    """Where the inputs say why they hold messages unread: the teammate's state."""

    state: AgentState

    def set(self, **fields: Any) -> None: ...


class Inputs:
    def __init__(self, team: Team, name: str, box: Mailbox, subagents: Arrivals,
                 console: Console, status: Status, limit: Callable[[], str | None],
                 on_mode_change: Callable[[ModeChange, Message], None],
                 resumed: str | None) -> None:
        """`limit`: why no new turn starts (out of turns or budget, shutting down), or None.
        `on_mode_change`: the lead set the permission mode (a signed `mode_change` order):
        from the next tool call on."""
        self.team, self.name, self.box = team, name, box
        self.subagents, self.console, self.status = subagents, console, status
        self.limit, self.on_mode_change = limit, on_mode_change
        self.resumed = resumed  # a restart: its first input says so, with the why
        self.seal = LeadSeal(team.name, name)
        self._waiting_at_start: set[str] = set()  # unread when the turn began
        self._watcher: Watcher | None = None  # the idle loop's, for waits within a turn
        # A task this process found in progress as its own at start: a restart (`swarm team
        # resume` keeps the tasks of the members it restarts): continued before any other.
        self._started = False
        self.continuing: str | None = None

    def watcher(self) -> Watcher:
        """What wakes an idle teammate: its mailbox, the task list, a subagent's end."""
        return stores.team_watcher(self.team.name, [self.name], True, [], self.subagents.waker)

    def unread(self) -> list[Inbound]:
        """Unread messages with their kinds; answers for requests no longer open (the asker
        consumes the live ones) are plain text like any other unauthorised structure. A
        mode change is applied here, not handed to the model: it is an order, not a task."""
        inbound = [Inbound.read(m, self.seal) for m in self.box.unread()]
        changes = [i for i in inbound if isinstance(i.kind, ModeChange)]
        if not changes:
            return inbound
        for item in changes:
            assert isinstance(item.kind, ModeChange)
            self.on_mode_change(item.kind, item.message)
        self.mark_read(changes)  # applied (and in state) before read: a crash re-applies it
        return [i for i in inbound if not isinstance(i.kind, ModeChange)]

    def apply_mode_changes(self) -> None:
        """Before a tool call: a mode the lead set during the turn applies to this call."""
        if self.box.unread():
            self.unread()

    def next_input(self, watcher: Watcher) -> tuple[list[Inbound], Task | None]:
        """Block until there is something to do, in that order."""
        self._watcher = watcher
        while True:
            inbound = self.unread()
            shutdown = [i for i in inbound if is_shutdown(i)]
            if shutdown:
                return shutdown[:1], None
            limit = self.limit()
            if limit and inbound:
                # Out of turns or budget: leave the messages unread for a respawn with a new
                # limit, and say why in status rather than consume them unanswered.
                detail = f"{limit}: {len(inbound)} message(s) wait unread"
                if self.status.state.detail != detail:
                    self.status.set(detail=detail)
            elif inbound or self.subagents.has_arrivals():  # a background subagent ended
                lead = [i for i in inbound if i.message.sender == LEAD_NAME]
                peers = sorted((i for i in inbound if i.message.sender != LEAD_NAME),
                               key=lambda i: i.message.timestamp)
                return lead + peers, None
            elif limit is None:
                task = self._next_task()
                if task is not None:
                    return [], task
            watcher.wait(settings.heartbeat_interval() * 2)

    def _next_task(self) -> Task | None:
        """Its own task left in progress, else the next one it may claim. None while the team's
        files are gone (a person moved the folder away mid-claim): whether it stays is the
        heartbeat's team-gone check (runtime/process/team_gone.py), never a crash."""
        try:
            return self._own_in_progress() or self.team.tasks.claim_next(self.name)
        except FileNotFoundError as exc:
            if self.team.exists():
                raise
            self.console.say(f"the team's task list is gone ({exc.filename}): "
                             "waiting for the team file to come back")
            return None

    def _own_in_progress(self) -> Task | None:
        """Once per process: the lowest-id task left in progress as its own (it was restarted
        in the middle of it)."""
        if self._started:
            return None
        self._started = True
        task = next((t for t in self.team.tasks.list()  # in id order
                     if t.owner == self.name and t.status == "in_progress"), None)
        self.continuing = task.id if task is not None else None
        return task

    def shutdown_within(self, seconds: float) -> Inbound | None:
        """Wait up to `seconds` (a failing model call backing off), returning at once with a
        shutdown request from the lead that is unread or arrives meanwhile."""
        deadline = time.monotonic() + seconds
        while True:
            found = next((i for i in self.unread() if is_shutdown(i)), None)
            remaining = deadline - time.monotonic()
            if found is not None or remaining <= 0:
                return found
            if self._watcher is None:
                time.sleep(min(remaining, settings.heartbeat_interval()))
            else:
                self._watcher.wait(remaining)

    def turn_began(self) -> None:
        """What is unread now keeps its place in the order: `arrivals` leaves it for the next
        input."""
        self._waiting_at_start = {m.id for m in self.box.unread()}

    def begin(self, inbound: list[Inbound], task: Task | None) -> ShutdownRequest | None:
        """A turn starts with these inputs (shown in the pane; what is unread now left for the
        next input): the last shutdown request among them, which the turn must answer."""
        self.announce(inbound, task)
        self.turn_began()
        asked = [i.kind for i in inbound if isinstance(i.kind, ShutdownRequest)]
        return asked[-1] if asked else None

    def mark_read(self, inbound: list[Inbound]) -> None:
        self.box.mark_read([i.message.id for i in inbound])

    # -- how the model and the pane see them -------------------------------------------------
    def render(self, inbound: list[Inbound], task: Task | None) -> list[Block]:
        blocks = [{"type": "text", "text": render_for_model(i.message) + _unsigned_note(i)}
                  for i in inbound]
        if self.resumed:
            blocks.insert(0, {"type": "text", "text": (
                f"<system-note>Your process was {escape(self.resumed)}; your conversation so"
                " far is above. Handle what follows.</system-note>")})
            self.resumed = None
        if task is not None:
            how = (f"You were working on task #{task.id} when your process stopped: continue"
                   " it (check what is done already)" if task.id == self.continuing else
                   f"You have claimed task #{task.id}. Do it")
            self.continuing = None
            blocks.append({"type": "text", "text": (
                f'<task-assignment id="{task.id}" subject="{escape(task.subject, True)}">\n'
                f"{escape(task.description)}\n</task-assignment>\n"
                f'{how}, mark it completed with TaskUpdate (task_id "{task.id}", with a short'
                f" result) and report to {LEAD_NAME}.")})
        return blocks

    def announce(self, inbound: list[Inbound], task: Task | None = None) -> None:
        """Show each message (and a claimed task) in the pane as it reaches the model."""
        view = self.console.view
        for item in inbound:
            message = item.message
            if item.kind is not None:
                self.console.show(*view.incoming(message.sender, message.color,
                                                 structured_line(item.kind)))
            else:
                self.console.show(*view.incoming(message.sender, message.color,
                                                 brief(message.summary or message.text),
                                                 message.text))
        if task is not None:
            self.console.show(*view.claimed(task.id, task.subject, task.description))

    def arrivals(self) -> tuple[list[Block], Callable[[], None]]:
        """Messages from the lead or peers that came in during the turn, and subagents' ends,
        for the model's next call; and what marks the messages read once they are in."""
        fresh = [i for i in self.unread() if not is_shutdown(i)
                 and i.message.id not in self._waiting_at_start]
        from_subagents = self.subagents.take_arrivals()
        if not fresh:
            return from_subagents, lambda: None
        self.announce(fresh)

        def mark_read() -> None:
            self.mark_read(fresh)

        return self.render(fresh, None) + from_subagents, mark_read
