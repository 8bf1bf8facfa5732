"""The tools of a lead or member that nothing wakes: an MCP client leading a team through
`swarm mcp serve` (or joining it as a member with `--as NAME`) has no session loop handing it
its mail, so it reads and waits itself.

- ReadInbox: the unread messages, rendered as a teammate's model sees them (the escaped
  `<teammate-message from=... summary=...>` form); for the lead, under the `<team-status>` block
  its idle notes fold into, with permission and plan requests to answer. Marked read only once
  the result is handed over (`Delivered.done`): a failure before that loses nothing.
- WaitForTeam {timeout_s}: blocks on inotify (the FileWatcher), never a poll loop, until
  something the lead should see arrives, by `swarm lead`'s own wake policy (lead/wake_policy.py): a
  message, a verified death, a refused shutdown, a permission or plan request, the team going
  quiet or stalled; or until the timeout. It says which; the messages stay for ReadInbox. A
  member waits for its own mail.
- TeamCreate: create the team this lead leads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, TypeVar, cast

from pydantic import Field

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message, ShutdownRequest, escape, render_for_model
from swarm.core.store import select as stores
from swarm.core.store.api import Watcher
from swarm.core.store.waker import Waker
from swarm.core.team.lead_key import LeadSeal
from swarm.core.team.team import Team
from swarm.core.text.readable import structured_line
from swarm.lead.team_view import LOOK_EVERY, lead_watcher
from swarm.lead.wake_policy import Block, Wake, Watch, text_block
from swarm.runtime.teammate.console import brief
from swarm.runtime.teammate.inputs import Inbound, is_shutdown
from swarm.runtime.tools.base import Tool, ToolContext, ToolHost, ToolResult
from swarm.runtime.tools.schema import NoInput, ToolInput

T = TypeVar("T")
DEFAULT_WAIT = 50.0  # under the 60 s some MCP clients give a tool call by default
MAX_WAIT = 3600.0


class Delivered(ToolResult):
    """A result that hands over messages: `done` marks them read, called by whoever returns the
    result once it is on its way (never when the call failed or was cancelled first)."""

    done: Callable[[], None] = lambda: None


class WaitHost(ToolHost, Protocol):
    """What the waiting tools ask of the process serving them."""

    lock: threading.RLock  # held by every other tool call; a wait takes it per look only
    waker: Waker  # set when the server is closing: every wait ends at once

    def closing(self) -> bool: ...

    def shutdown_asked(self, request_id: str) -> None:
        """A member read a shutdown request from the lead (its SendMessage answers it)."""


class LeadWaitHost(WaitHost, Protocol):
    watch: ServedWatch


class TeamHost(Protocol):
    def create_team(self, name: str | None, description: str) -> Team:
        """Create a team and become its lead process."""


class ServedWatch(Watch):
    """`swarm lead`'s wake policy for a lead that asks for its news (an MCP client): `signal`
    says what would wake it, `inbox` hands the messages over. Nothing is consumed until the
    returned Wake's `done` runs, so a call that fails or is cancelled loses nothing."""

    def signal(self) -> Wake | None:
        """What would start a `swarm lead` turn now. A quiet or stalled team is told once, with
        its block; messages, deaths, refusals and requests are named, and stay queued."""
        self.collect()
        view = self.last_view = self.view()
        quiet = view.quiet and bool(self.unseen)
        stalled = self._stalled_for_a_while(view) and not quiet
        reasons = [reason for reason, _, _ in self._waking]
        if quiet or stalled:
            reasons.append("quiet" if quiet else "stalled")
            head = self.quiet_block(view) if quiet else self.stalled_block(view)
            told = view.signature() if stalled else None
            consume = self._consume([])

            def done() -> None:
                if told is not None:
                    self._stall_told = told
                consume()

            return Wake(reasons, [text_block(head)], done)
        if reasons:
            head = self.status_block(view)
            return Wake(reasons, [text_block(head)] if head else [])
        return None

    def inbox(self) -> Wake:
        """ReadInbox: the status block, then every queued message and request."""
        self.collect()
        view = self.last_view = self.view()
        waking = list(self._waking)
        head = self.status_block(view)
        blocks = ([text_block(head)] if head else []) + [block for _, _, block in waking]
        return Wake([reason for reason, _, _ in waking], blocks, self._consume(waking))

    def queued(self) -> list[tuple[str, Message]]:
        return [(reason, message) for reason, message, _ in self._waking]

    def _consume(self, waking: list[tuple[str, Message, Block]]) -> Callable[[], None]:
        """Mark read what is handed over now (requests stay unread until answered) and the idle
        notes folded so far; what arrives meanwhile stays for the next call."""
        fold, unseen, events = list(self._fold), set(self.unseen), len(self.events)

        def done() -> None:
            self._waking = [w for w in self._waking if not any(w is x for x in waking)]
            self._fold = [i for i in self._fold if i not in fold]
            self.unseen -= unseen
            del self.events[:events]
            self.box.mark_read([m.id for r, m, _ in waking if r != "request"] + fold)

        return done


class WaitInput(ToolInput):
    timeout_s: float | None = Field(None, ge=0, le=MAX_WAIT, allow_inf_nan=False)


class TeamCreateInput(ToolInput):
    name: str | None = None
    team_name: str | None = None  # the seeds' key for `name`
    description: str | None = None


def wait_for(host: WaitHost, watcher: Watcher, look: Callable[[], T | None],
             timeout: float) -> T | None:
    """Look (under the host's lock), then sleep on the watcher until a file changes, at most
    LOOK_EVERY seconds; None once `timeout` passed or the server is closing."""
    deadline = time.monotonic() + timeout
    while True:
        with host.lock:
            found = look()
        if found is not None:
            return found
        remaining = deadline - time.monotonic()
        if remaining <= 0 or host.closing():
            return None
        watcher.wait(min(LOOK_EVERY, remaining))


def _preview(reason: str, message: Message, seal: LeadSeal) -> str:
    """One escaped line: who, and the summary (a protocol message: its fields)."""
    kind = Inbound.read(message, seal).kind
    line = structured_line(kind) if kind is not None else message.summary or message.text
    return escape(f"- {reason} from {message.sender}: {brief(line, 120)}")


class ReadInbox(Tool):
    name = "ReadInbox"
    description = (
        "Return your unread messages, each as <teammate-message from=\"...\" summary=\"...\">"
        "text</teammate-message> (a shutdown request from the lead first, then the lead's"
        " messages, then your peers', oldest first). Each message is returned once: it is"
        " marked read as it is handed to you."
    )
    input_model = NoInput

    def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        box = ctx.team.inbox(ctx.name, checked=False)
        seal = LeadSeal(ctx.team.name, ctx.name)
        unread = [Inbound.read(m, seal) for m in box.unread()]
        shutdown = [i for i in unread if is_shutdown(i)][:1]
        lead = [i for i in unread if i.message.sender == LEAD_NAME and i not in shutdown]
        peers = sorted((i for i in unread if i.message.sender != LEAD_NAME),
                       key=lambda i: i.message.timestamp)
        ordered = shutdown + lead + peers
        if not ordered:
            return ToolResult("(no unread messages)")
        host = cast(WaitHost, ctx.host)
        for item in shutdown:
            assert isinstance(item.kind, ShutdownRequest)
            host.shutdown_asked(item.kind.request_id)
        text = "\n".join(render_for_model(i.message) for i in ordered)
        ids = [i.message.id for i in ordered]

        def done() -> None:
            box.mark_read(ids)

        return Delivered(text, done=done)


class LeadReadInbox(ReadInbox):
    description = (
        "Return what waits for you, each item once (marked read as it is handed to you): a"
        " <team-status> block (each teammate's state and last report: idle notes are folded"
        " into it), then teammates' messages as <teammate-message from=\"...\""
        " summary=\"...\">text</teammate-message>, deaths, refused shutdowns, and permission"
        " or plan requests to answer with AnswerPermission / AnswerPlan."
    )

    def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        wake = cast(LeadWaitHost, ctx.host).watch.inbox()
        texts = [str(block["text"]) for block in wake.blocks]
        if not wake.reasons:
            texts.insert(0, "(no unread messages)")
        return Delivered("\n\n".join(texts), done=wake.done)


class WaitForTeam(Tool):
    name = "WaitForTeam"
    description = (
        "Block until a message reaches you, or timeout_s seconds pass (default 50, at most"
        " 3600; 0 only looks), and say which. The messages stay unread: read them with"
        " ReadInbox."
    )
    input_model = WaitInput
    read_only = True
    blocking = True  # run without the server's lock: it takes it per look

    def run(self, args: WaitInput, ctx: ToolContext) -> ToolResult:
        timeout = DEFAULT_WAIT if args.timeout_s is None else args.timeout_s
        host = cast(WaitHost, ctx.host)
        box = ctx.team.inbox(ctx.name, checked=False)
        with stores.team_watcher(ctx.team.name, [ctx.name], False, [], host.waker) as watcher:
            unread = wait_for(host, watcher, lambda: box.unread() or None, timeout)
        if not unread:
            return ToolResult(self._nothing(timeout, host))
        lines = [f"woke: message ({len(unread)} unread)"]
        seal = LeadSeal(ctx.team.name, ctx.name)
        lines += [_preview("message", m, seal) for m in unread]
        return ToolResult("\n".join([*lines, "Read them with ReadInbox."]))

    @staticmethod
    def _nothing(timeout: float, host: WaitHost) -> str:
        if host.closing():
            return "woke: closing (the server is shutting down)"
        return f"woke: timeout (nothing new in {timeout:g}s)"


class LeadWaitForTeam(WaitForTeam):
    description = (
        "Block until something needs you, or timeout_s seconds pass (default 50, at most 3600;"
        " 0 only looks), and say which: message (a teammate wrote to you), terminated (a"
        " teammate died), refused (a shutdown was refused), request (a permission or plan"
        " request to answer), quiet (every teammate idle, no task open: their last reports"
        " come with it), stalled (open tasks nobody can take), or timeout. Messages and"
        " requests stay for ReadInbox. Idle teammates do not wake you: their last reports are"
        " in the status block."
    )

    def run(self, args: WaitInput, ctx: ToolContext) -> ToolResult:
        timeout = DEFAULT_WAIT if args.timeout_s is None else args.timeout_s
        host = cast(LeadWaitHost, ctx.host)
        watch = host.watch

        def look() -> tuple[Wake, list[tuple[str, Message]]] | None:
            wake = watch.signal()
            return None if wake is None else (wake, watch.queued())

        with lead_watcher(ctx.team, host.waker) as watcher:  # before the first look
            found = wait_for(host, watcher, look, timeout)
        if found is None:
            with host.lock:
                head = watch.status_block(watch.view())
            return ToolResult("\n".join(filter(None, [self._nothing(timeout, host), head])))
        wake, queued = found
        lines = [f"woke: {', '.join(dict.fromkeys(wake.reasons))}"]
        seal = LeadSeal(ctx.team.name, ctx.name)
        lines += [_preview(reason, message, seal) for reason, message in queued]
        if queued:
            lines.append("Read them with ReadInbox.")
        lines += [str(block["text"]) for block in wake.blocks]
        return Delivered("\n".join(lines), done=wake.done)


class TeamCreate(Tool):
    name = "TeamCreate"
    description = (
        "Create the team you lead, when this server has none yet (it was started without"
        " --team, or that team does not exist). name (or team_name): 1-63 of a-z, 0-9, '-', '_' (default: the"
        " server's --team, else a generated one; a taken name gets a -xxxx suffix);"
        " description: what the team is for. Then add tasks (TaskCreate) and start teammates"
        " (SpawnTeammate)."
    )
    input_model = TeamCreateInput

    def run(self, args: TeamCreateInput, ctx: ToolContext) -> ToolResult:
        name = (args.name or "").strip() or None
        alias = (args.team_name or "").strip() or None
        if name and alias and name != alias:
            return ToolResult(f"name {name!r} and team_name {alias!r} differ: give one",
                              is_error=True)
        name = name or alias
        team = cast(TeamHost, ctx.host).create_team(name, args.description or "")
        return ToolResult(f"created team {team.name}; you are its lead ({LEAD_NAME}). Next:"
                          " TaskCreate the work, SpawnTeammate the teammates, then WaitForTeam"
                          " and ReadInbox until the work is done.")
