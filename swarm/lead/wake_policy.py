"""What wakes the lead, and what it is told when it wakes.

The lead's wake policy (docs/design/prompt-and-wake.md): the person's input, a plain message from a member, a (verified)
`teammate_terminated`, a refused `shutdown_response` and, with `--approvals lead`, permission and
plan requests start a lead turn. An `idle_notification` never does: the newest one per member is
folded into a compact `<team-status>` block at the head of the next input. The team going quiet
(every teammate idle or exited, no task pending or in progress, nothing waiting for an answer)
wakes the lead once, with each teammate's last idle summary. Messages that arrive during a lead
turn reach its next model call (`arrivals`). A teammate's report that arrives while others are
still working waits a short settle window for theirs, so a burst of reports is one lead turn
(lead.settle).

`scripts/anchor_policy.py` re-creates the policy we measure against (for the benchmark).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from msgspec import Struct, field

from swarm import settings
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import (
    IdleNotification,
    Message,
    PermissionRequest,
    PlanApprovalRequest,
    ShutdownResponse,
    TeammateTerminated,
    escape,
    render_for_model,
)
from swarm.core.team.lead_key import LeadSeal
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.lead.settle import Settle
from swarm.lead.team_view import DONE_STATES, TeamView, look, task_tally
from swarm.ops import approvals
from swarm.ops.approvals import Pending, answer_plan, deny_permission
from swarm.ops.member.health import MemberStatus, age_s, observe_member
from swarm.runtime.teammate.console import brief
from swarm.runtime.teammate.inputs import Inbound

Block = dict[str, Any]
STALL_SETTLE = 1.0  # seconds a stall must last before it wakes the lead


class Reporter(Protocol):
    """Where the lead's terminal (or CI log) hears about the team."""

    def message(self, sender: str, color: str | None, text: str) -> None:
        """A member's message or notice, one line."""

    def notice(self, text: str) -> None:
        """Something happened in the team (an exit, an answered request)."""

    def request(self, pending: Pending) -> None:
        """`--approvals human`: a permission request or plan for the person to answer."""

    def resolved(self, pending: Pending) -> None:
        """A request left the pending list (answered anywhere, withdrawn, or timed out)."""


class Choice(Struct, frozen=True):
    """Which of the waiting items a wake delivers now (the rest wait for the next)."""

    deliver: list[int]  # indices into the waiting items, in the order they are given
    as_status: bool = False  # a quiet team told as a status change; the quiet wake still to come


class WakeSteer(Protocol):
    """Decides what a wake delivers (a replay: what the recording's wake held)."""

    def choose(self, kind: str, items: list[str]) -> Choice | None:
        """`kind`: quiet, stalled, status or none (the head block); `items`: the waiting
        blocks' texts. None: hold this wake for now."""


class Wake(Struct, dict=True):
    reasons: list[str]  # message|terminated|refused|request|quiet|stalled|idle|subagent
    blocks: list[Block]
    done: Callable[[], None] = lambda: None  # once the blocks are in the conversation


class Watch(Struct, dict=True):
    """Swarm's wake policy over the lead's mailbox and the team's files."""

    team: Team
    approvals: str  # human | lead
    reporter: Reporter
    latest: dict[str, IdleNotification] = field(default_factory=dict)  # newest idle note
    unseen: set[str] = field(default_factory=set)  # members whose newest note the lead has not seen
    events: list[str] = field(default_factory=list)  # folded into the next status block
    _seen: set[str] = field(default_factory=set)  # message ids already classified
    _fold: list[str] = field(default_factory=list)  # read once the next input is in
    _waking: list[tuple[str, Message, Block]] = field(default_factory=list)  # (reason, msg, block)
    _open: dict[str, Pending] = field(default_factory=dict)  # requests waiting for an answer
    _shutdowns: dict[str, str] = field(default_factory=dict)  # request id -> member asked
    _stall_told: tuple[object, ...] | None = None
    _stall_seen: tuple[tuple[object, ...], float] | None = None
    last_view: TeamView | None = None
    steer: WakeSteer | None = None  # a replay's (lead/replay_wakes.py): none otherwise
    settle: Settle = field(default_factory=Settle)  # reports held for a burst's others

    def __post_init__(self) -> None:
        self.box = self.team.inbox(LEAD_NAME, checked=False)
        self.seal = LeadSeal(self.team.name, LEAD_NAME)
        # A resumed lead starts from the newest notes its predecessor read (they are archived).
        for message in self.box.archived():
            kind = message.structured()
            if isinstance(kind, IdleNotification) and kind.sender == message.sender:
                self.latest[message.sender] = kind

    # -- reading the mailbox ---------------------------------------------------------------------
    def collect(self) -> None:
        """Classify every new unread message once: fold, queue to wake, or hand to the person."""
        unread = self.box.unread()
        self._seen &= {m.id for m in unread}  # read ones are gone from the live file for good
        for message in unread:
            if message.id not in self._seen:
                self._seen.add(message.id)
                self._classify(Inbound.read(message, self.seal))
        self._settle_requests({m.id for m in unread})

    def _classify(self, item: Inbound) -> None:
        message, kind = item.message, item.kind
        sender = message.sender
        if isinstance(kind, IdleNotification) and kind.sender == sender:
            self.latest[sender] = kind
            self.unseen.add(sender)
            self._fold.append(message.id)
            self.reporter.notice(f"{sender} is idle ({kind.idle_reason})"
                                 + (f": {brief(kind.summary, 80)}" if kind.summary else ""))
            return
        if isinstance(kind, ShutdownResponse) and self._shutdowns.get(kind.request_id) == sender:
            del self._shutdowns[kind.request_id]
            if kind.approve:
                self._fold.append(message.id)
                self.events.append(f"{sender} agreed to shut down")
                self.reporter.notice(f"{sender} agreed to shut down")
                return
            self.reporter.message(sender, message.color, f"refused to shut down: {kind.reason}")
            self._queue("refused", message, render_for_model(message))
            return
        if isinstance(kind, TeammateTerminated) and self._verified_death(kind):
            name = kind.agent_id.partition("@")[0]
            self.reporter.notice(f"{name} terminated: {kind.reason}")
            self._queue("terminated", message, f'<teammate-terminated name="{escape(name, True)}">'
                        f"{escape(kind.reason)}</teammate-terminated>")
            return
        if isinstance(kind, PermissionRequest | PlanApprovalRequest) and \
                approvals.names_this_team(self.team, kind):
            pending = Pending(message, kind)
            self._open[message.id] = pending
            person_only = isinstance(kind, PermissionRequest) and kind.person_only
            if self.approvals == "lead" and not person_only:
                self.reporter.notice(f"{sender} asks: {describe_request(pending)}")
                self._waking.append(("request", message, text_block(render_request(pending))))
            else:
                self.reporter.request(pending)
            return
        # Plain text, and anything structured we do not act on (forged or unasked for).
        self.reporter.message(sender, message.color, message.summary or brief(message.text, 80))
        self._queue("message", message, render_for_model(message))
        self.settle.arrived()

    def _queue(self, reason: str, message: Message, text: str) -> None:
        self._waking.append((reason, message, text_block(text)))

    def _verified_death(self, kind: TeammateTerminated) -> bool:
        """Anyone can send `teammate_terminated`: believe it only when the member it names is
        really dead or exited (swarm status's own test)."""
        member = self.team.config().member(kind.agent_id.partition("@")[0])
        if member is None or member.name == LEAD_NAME:
            return False
        return observe_member(self.team, member).state in DONE_STATES

    # -- requests: answered, withdrawn, or denied at their timeout ----------------------------
    def _settle_requests(self, unread: set[str]) -> None:
        timeout = settings.permission_timeout()
        for message_id, pending in list(self._open.items()):
            if message_id not in unread:
                del self._open[message_id]
                self.reporter.resolved(pending)
                outcome = approvals.outcome(self.team, pending)
                line = f"{pending.message.sender}'s request ({describe_request(pending)}): {outcome}"
                self.reporter.notice(line)
                if self.approvals == "human":  # the lead model is told only the outcome
                    self.events.append(line)
            elif age_s(pending.message.timestamp) > timeout:
                self._expire(pending, timeout)

    def _expire(self, pending: Pending, timeout: float) -> None:
        reason = f"nobody answered within {timeout:g}s"
        try:
            if isinstance(pending.request, PermissionRequest):
                deny_permission(self.team, pending.request.request_id, reason, by="timeout")
            else:
                answer_plan(self.team, pending.message.sender, approve=False, feedback=reason)
        except SwarmError:
            pass  # answered or withdrawn meanwhile: the next look settles it

    def open_requests(self) -> list[Pending]:
        return list(self._open.values())

    # -- what the lead is told -----------------------------------------------------------------
    def note_shutdown(self, member: str, request_id: str) -> None:
        """The lead asked `member` to shut down: its answer is handled, not shown as text."""
        self._shutdowns[request_id] = member

    def view(self) -> TeamView:
        reported = {name: note.turns if note.turns is not None else 1 << 30
                    for name, note in self.latest.items()}  # a note without turns: trust it
        return look(self.team, len(self._open), reported)

    def next_wake(self) -> Wake | None:
        """What should start a lead turn now, if anything."""
        self.collect()
        view = self.last_view = self.view()
        quiet = view.quiet and bool(self.unseen)
        stalled = self._stalled_for_a_while(view) and not quiet
        if not (self._waking or quiet or stalled):
            return None
        if not (quiet or stalled) and self._held(view):
            return None
        if quiet:
            kind, head = "quiet", self.quiet_block(view)
        elif stalled:
            kind, head = "stalled", self.stalled_block(view)
        else:
            head = self.status_block(view)
            kind = "status" if head else "none"
        chosen = None
        if self.steer is not None:
            choice = self.steer.choose(kind, [str(b.get("text", "")) for _, _, b in self._waking])
            if choice is None:
                return None  # held: nothing is consumed, the next look asks again
            if choice.as_status:
                kind, head = "status", self.status_block(view)
            chosen = choice.deliver
        if kind == "stalled":
            self._stall_told = view.signature()
        told = [kind] if kind in ("quiet", "stalled") else []
        return self._deliver(told, [head] if head else [], chosen, keep_unseen=quiet and not told)

    def _held(self, view: TeamView) -> bool:
        """Only reports wait, and only while a teammate still works (its report is coming)
        and the settle window lasts; a replay's wakes are the recording's."""
        if self.steer is not None or any(r != "message" for r, _, _ in self._waking):
            return self.settle.hold(False)
        return self.settle.hold(any(s.state == "working" for s in view.statuses))

    def look_again_by(self) -> float | None:
        """When held reports are due (time.monotonic()), so the session looks again then."""
        return self.settle.until

    def _stalled_for_a_while(self, view: TeamView) -> bool:
        """A stall seen unchanged for STALL_SETTLE seconds and not told yet: a teammate that
        just claimed a task is idle for a moment with the task in progress, not stalled."""
        if not view.stalled:
            self._stall_seen = None
            return False
        now, signature = time.monotonic(), view.signature()
        if self._stall_seen is None or self._stall_seen[0] != signature:
            self._stall_seen = (signature, now)
        return now - self._stall_seen[1] >= STALL_SETTLE and signature != self._stall_told

    def input_for(self, text: str) -> Wake:
        """The person's input (or the first prompt): the status block, waiting messages, text."""
        self.collect()
        head = self.status_block(self.view())
        wake = self._deliver([], [head] if head else [])
        wake.reasons = ["person"]  # what started the turn (messages come along)
        wake.blocks.append(text_block(text))
        return wake

    def arrivals(self) -> Wake | None:
        """Messages that woke nobody yet, for the next model call of the running turn."""
        self.collect()
        if not self._waking:
            return None
        chosen = None
        if self.steer is not None:  # a replay: only what reached this call in the recording
            choice = self.steer.choose("none", [str(b.get("text", "")) for _, _, b in self._waking])
            chosen = choice.deliver if choice is not None else []
            if not chosen:
                return None
        return self._deliver([], [], chosen)

    def _deliver(self, told: list[str], head: list[str], chosen: list[int] | None = None,
                 keep_unseen: bool = False) -> Wake:
        """`told`: reasons besides the waiting items'. `chosen`: the waiting items to deliver,
        in that order (default all; the rest wait). `keep_unseen`: the team is quiet but not
        told so yet (a replay's status wake)."""
        order = list(range(len(self._waking))) if chosen is None else chosen
        waking = [self._waking[i] for i in order]
        self._waking = [w for i, w in enumerate(self._waking) if i not in order]
        reasons = [r for r, _, _ in waking] + told
        blocks = [text_block(h) for h in head] + [block for _, _, block in waking]
        read = [m.id for r, m, _ in waking if r != "request"]  # requests stay until answered
        fold, self._fold = self._fold, []
        if not keep_unseen:
            self.unseen.clear()
        self.events.clear()

        def done() -> None:
            self.box.mark_read([*read, *fold])

        return Wake(reasons, blocks, done)

    def finished(self) -> bool:
        """Headless, right after `next_wake` found nothing: may the session end? The team is
        quiet (or stalled, and the lead was told) and there is nothing the lead has not heard."""
        view = self.last_view
        if view is None or self._waking or self.unseen:
            return False
        return view.quiet or (view.stalled and view.signature() == self._stall_told)

    # -- blocks --------------------------------------------------------------------------------
    def member_line(self, status: MemberStatus, view: TeamView, full: bool = False) -> str:
        state = status.state
        if status.current_task:
            task = next((t for t in view.tasks if t.id == status.current_task), None)
            state += f" on #{status.current_task}" + (f' "{brief(task.subject, 50)}"' if task else "")
        if status.state in DONE_STATES and status.detail:
            state += f" ({brief(status.detail, 60)})"
        note = self.latest.get(status.name)
        if note is not None and note.idle_reason != "available":
            state += f" [{note.idle_reason}" + (f": {brief(note.failure_reason, 80)}"
                                                  if note.failure_reason else "") + "]"
        line = f"{status.name}: {state}"
        if note is not None and note.summary:
            line += f'; last: "{note.summary if full else brief(note.summary, 100)}"'
        return escape(line)

    def status_block(self, view: TeamView) -> str:
        if not view.statuses and not view.tasks and not self.events:
            return ""
        lines = [self.member_line(s, view) for s in view.statuses]
        lines.append(task_tally(view.tasks))
        lines += [escape(e) for e in self.events]
        return "<team-status>\n" + "\n".join(lines) + "\n</team-status>"

    def quiet_block(self, view: TeamView) -> str:
        lines = ["The team is quiet: every teammate is idle or exited, no task is pending or in"
                 " progress, and nothing waits for an answer. Each teammate's last report:"]
        lines += [self.member_line(s, view, full=True) for s in view.statuses]
        lines.append(task_tally(view.tasks))
        lines += [escape(e) for e in self.events]
        return "<team-quiet>\n" + "\n".join(lines) + "\n</team-quiet>"

    def stalled_block(self, view: TeamView) -> str:
        open_tasks = [t for t in view.tasks if t.status != "completed"]
        lines = [f"No teammate is working, yet {len(open_tasks)} task(s) are unfinished and no"
                 " running teammate can take them:"]
        lines += [escape(f"#{t.id} [{t.status}] owner={t.owner or '-'}"
                         + (f" blocked_by={','.join(t.blocked_by)}" if t.blocked_by else "")
                         + f" {brief(t.subject, 60)}") for t in open_tasks]
        if any(t.status == "failed" for t in open_tasks):
            lines.append("A failed task blocks what it blocks: read its result, then set it back"
                         " to pending (TaskUpdate) for another try, or plan around it.")
        lines += [self.member_line(s, view) for s in view.statuses]
        lines += [escape(e) for e in self.events]
        return "<team-stalled>\n" + "\n".join(lines) + "\n</team-stalled>"


def describe_request(pending: Pending) -> str:
    """A request as whoever answers it sees it: the real input (never only the asker's words)."""
    return pending.shown()


def render_request(pending: Pending) -> str:
    """A request for the lead model to answer (`--approvals lead`): what the call would really
    do, its whole input, and the asker's own description only marked as its words."""
    request, sender = pending.request, escape(pending.message.sender, True)
    if isinstance(request, PermissionRequest):
        said = " ".join(request.description.split())
        says = (f'the requester\'s own description: "{escape(said)}" (its words, not checked:'
                " decide on the input)\n") if said else ""
        return (f'<permission-request request_id="{request.request_id}" from="{sender}" '
                f'tool="{escape(request.tool_name, True)}">\n'
                f"{escape(pending.what)}\ninput: {escape(json.dumps(request.input))}\n{says}"
                "</permission-request>\nAnswer it with AnswerPermission.")
    return (f'<plan-approval-request from="{sender}">\n{escape(request.plan)}\n'
            "</plan-approval-request>\nAnswer it with AnswerPlan.")


def text_block(text: str) -> Block:
    return {"type": "text", "text": text}
