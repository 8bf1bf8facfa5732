"""Asking the lead: permission requests and plan approval, answered through the mailbox.

Only the tool call waits (the process keeps its heartbeat). A reply counts only when it comes
from the lead, answers the request this asker has open (same request id), and only once; any
other message is left for the agent's next input, where it is plain text. An interrupt abandons
the wait, a shutdown request arriving meanwhile ends it, and a timeout denies with a reason the
model sees. A request nobody waits for any more is withdrawn from the lead's pending list.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from swarm import settings
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import (
    Message,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownRequest,
    StructuredMessage,
)
from swarm.core.store.api import Mailbox
from swarm.core.team.attention import Alert, lead_terminal, ring, until
from swarm.core.team.lead_key import LeadSeal
from swarm.core.text.readable import tool_call
from swarm.core.text.view import View

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from swarm.core.team.team import Team
    from swarm.runtime.tools.base import Tool

T = TypeVar("T")
VIEW = View(color=True)
Reply = PermissionResponse | PlanApprovalResponse


class Waiter(Protocol):
    """What asking needs of the agent it asks for."""

    def set_state(self, **fields: Any) -> None: ...

    def interruptible(self, call: Callable[[], T]) -> T: ...

    def show(self, *lines: str) -> None:
        """Lines for the pane (the wait and how it ended)."""


@dataclass
class Waiting:
    """A `Waiter` made of the three things it asks (an agent's state, its interrupts, its
    pane), so asking climbs back to none of them through the agent."""

    set_state: Callable[..., None]
    interruptible: Callable[[Callable[[], Any]], Any]
    show: Callable[..., None]


class Asker:
    def __init__(self, team: Team, name: str, box: Mailbox, waiter: Waiter) -> None:
        self.team = team
        self.name = name
        self.box = box
        self.waiter = waiter
        self.seal = LeadSeal(team.name, name)

    def permission(self, tool: Tool, args: dict[str, Any], use_id: str, why: Decision) -> Decision:
        request = PermissionRequest(agent_id=f"{self.name}@{self.team.name}", tool_name=tool.name,
                                    tool_use_id=use_id, description=tool.describe(args),
                                    input=args, person_only=why.person_only, tier=why.tier)
        timeout = settings.permission_timeout()
        deadline = time.time() + timeout
        self.waiter.show(VIEW.asks(f"may I run {tool_call(tool.name, args)}? ({why.reason});"
                                   f" denied {until(deadline)} unless answered",
                                   request.request_id))
        alert = Alert(team=self.team.name, sender=self.name, kind=request.type,
                      request_id=request.request_id, text=request.description,
                      answer=f"swarm permissions approve {request.request_id[:8]}",
                      deadline=deadline)
        answer = self._ask(request, PermissionResponse, "waiting_permission",
                           f"asks: {request.description}", timeout, alert)
        if answer is None:
            if self._shutdown_waiting():
                decision = Decision("deny", "a shutdown was requested while waiting for approval")
            else:
                decision = Decision("deny", f"no answer from the lead within {timeout:g}s "
                                    f"({why.reason})", by="timeout")
        else:
            assert isinstance(answer, PermissionResponse)
            if answer.approve:
                reason = "approved by the lead" + (" (always)" if answer.always else "")
                decision = Decision("allow", reason + (", with an edited input"
                                                       if answer.updated_input else ""),
                                    updated_input=answer.updated_input, by=answer.by)
            else:
                decision = Decision("deny", "the lead denied it: "
                                    f"{answer.feedback or 'no reason given'}", by=answer.by)
        self.waiter.show(VIEW.answered(decision.behavior == "allow", decision.reason))
        return decision

    def plan(self, plan: str) -> PlanApprovalResponse | None:
        """Submit a plan and wait for the verdict; None when a shutdown came first."""
        request = PlanApprovalRequest(plan=plan)
        self.waiter.show(VIEW.asks("plan submitted, waiting for approval", request.request_id))
        alert = Alert(team=self.team.name, sender=self.name, kind=request.type,
                      request_id=request.request_id, text="plan submitted",
                      answer=f"swarm plans approve {self.name}")
        answer = self._ask(request, PlanApprovalResponse, "awaiting_plan", "plan submitted", None,
                           alert)
        assert answer is None or isinstance(answer, PlanApprovalResponse)
        if answer is None:
            self.waiter.show(VIEW.answered(False, "a shutdown was requested first"))
        else:
            verdict = "plan approved" if answer.approve else "plan rejected"
            self.waiter.show(VIEW.answered(answer.approve, verdict + (
                f": {answer.feedback}" if answer.feedback else "")))
        return answer


    # -- the exchange ---------------------------------------------------------------------------
    def _ask(self, request: PermissionRequest | PlanApprovalRequest, kind: type[Reply],
             state: str, detail: str, timeout: float | None, alert: Alert) -> Reply | None:
        sent = self.team.send(LEAD_NAME, request, sender=self.name)
        log.debug("asked the lead: %s %s", request.type, request.request_id)
        self.waiter.set_state(state=state, detail=detail)
        if self.team.config().lead_pid is None:  # led from a shell: nobody else tells the person
            ring(alert, lead_terminal())
        try:
            reply = self._await(request.request_id, kind, timeout)
        except BaseException:  # interrupted or stopped: nobody will use the answer
            self._withdraw(sent)
            raise
        finally:
            self.waiter.set_state(state="working", detail=None)
        if reply is None:
            self._withdraw(sent)
            return None
        message, answer = reply
        self.box.mark_read([message.id])  # consumed: the same id never counts twice
        return answer

    def _await(self, request_id: str, kind: type[Reply], timeout: float | None
               ) -> tuple[Message, Reply] | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.box.watcher() as watcher:
            while True:
                for message in self.box.unread():
                    structured = self._from_lead(message)
                    if isinstance(structured, kind) and structured.request_id == request_id:
                        return message, structured
                    if isinstance(structured, ShutdownRequest):
                        return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                wait = 1.0 if remaining is None else min(remaining, 1.0)
                self.waiter.interruptible(lambda w=wait: watcher.wait(w))  # type: ignore[misc]

    def _shutdown_waiting(self) -> bool:
        return any(isinstance(self._from_lead(m), ShutdownRequest) for m in self.box.unread())

    def _withdraw(self, message_ids: list[str]) -> None:
        """Take the request off the lead's pending list, so a late approve exits 2 instead of
        answering a call that was already denied."""
        self.team.inbox(LEAD_NAME, checked=False).mark_read(message_ids)

    def _from_lead(self, message: Message) -> StructuredMessage | None:
        """The lead's answer or order in `message`; None when its sender may not send it (only
        the lead answers requests and asks for a shutdown, signed: core.team.lead_key)."""
        kind = message.structured()
        return kind if kind is not None and self.seal.allows(kind, message) else None
