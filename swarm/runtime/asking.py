"""Asking the lead: permission requests and plan approval, answered through the mailbox.

Only the tool call waits (the process keeps its heartbeat); an interrupt abandons the wait, a
shutdown request arriving meanwhile denies the call so the agent can answer it, and a timeout
denies with a reason the model sees.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from swarm import settings
from swarm.core.mailbox import Mailbox
from swarm.core.names import LEAD_NAME
from swarm.core.protocol import (
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownRequest,
)
from swarm.core.rules import Decision

if TYPE_CHECKING:
    from swarm.core.protocol import Message
    from swarm.runtime.agent import Agent
    from swarm.runtime.tools import Tool


def permission_timeout() -> float:
    return settings.permission_timeout()


def _await_reply(agent: Agent, request_id: str, timeout: float | None) -> Message | None:
    """Wait for a reply carrying `request_id`; None on timeout or when a shutdown arrives."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with agent.box.watcher() as watcher:
        while True:
            for message in agent.box.unread():
                structured = message.structured()
                if getattr(structured, "request_id", None) == request_id and isinstance(
                        structured, PermissionResponse | PlanApprovalResponse):
                    return message
                if isinstance(structured, ShutdownRequest):
                    return None
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            wait = 1.0 if remaining is None else min(remaining, 1.0)
            agent.interruptible(lambda w=wait: watcher.wait(w))  # type: ignore[misc]


def _withdraw(agent: Agent, message_ids: list[str]) -> None:
    """Nobody waits for the answer any more: take the request off the lead's pending list, so a
    late approve exits 2 instead of answering a call that was already denied."""
    Mailbox(agent.team.name, LEAD_NAME).mark_read(message_ids)


def _ask(agent: Agent, request: PermissionRequest | PlanApprovalRequest, state: str,
         detail: str, timeout: float | None) -> Message | None:
    """Send `request` to the lead and wait in `state` for the reply (None: timeout or a shutdown
    came first). A request nobody will wait for any more is withdrawn from the lead's list."""
    sent = agent.team.send(LEAD_NAME, request, sender=agent.name)
    agent.set_state(state=state, detail=detail)
    try:
        reply = _await_reply(agent, request.request_id, timeout)
    except BaseException:  # interrupted or stopped: nobody will use the answer
        _withdraw(agent, sent)
        raise
    finally:
        agent.set_state(state="working", detail=None)
    if reply is None:
        _withdraw(agent, sent)
    return reply


def ask_lead(agent: Agent, tool: Tool, args: dict[str, Any], use_id: str,
             why: Decision) -> Decision:
    request = PermissionRequest(agent_id=f"{agent.name}@{agent.team.name}", tool_name=tool.name,
                                tool_use_id=use_id, description=tool.describe(args), input=args)
    timeout = permission_timeout()
    reply = _ask(agent, request, "waiting_permission", f"asks: {request.description}", timeout)
    if reply is None:
        if any(isinstance(m.structured(), ShutdownRequest) for m in agent.box.unread()):
            return Decision("deny", "a shutdown was requested while waiting for approval")
        return Decision("deny", f"no answer from the lead within {timeout:g}s ({why.reason})")
    agent.box.mark_read([reply.id])
    answer = reply.structured()
    assert isinstance(answer, PermissionResponse)
    if answer.approve:
        return Decision("allow", "approved by the lead", updated_input=answer.updated_input)
    return Decision("deny", f"the lead denied it: {answer.feedback or 'no reason given'}")


def submit_plan(agent: Agent, plan: str) -> str:
    """ExitPlanMode: send the plan, wait for the verdict, switch mode on approval."""
    if agent.setup.mode != "plan":
        return "You are not in plan mode; go ahead with the work."
    request = PlanApprovalRequest(plan=plan)
    reply = _ask(agent, request, "awaiting_plan", "plan submitted", None)
    if reply is None:
        return "A shutdown was requested before your plan was answered."
    agent.box.mark_read([reply.id])
    answer = reply.structured()
    assert isinstance(answer, PlanApprovalResponse)
    agent.setup.apply_plan_response(answer)
    if answer.approve:
        return (f"Your plan was approved. You are now in {agent.setup.mode} mode: carry it out."
                + (f" Lead's note: {answer.feedback}" if answer.feedback else ""))
    return ("Your plan was rejected. Feedback from the lead: "
            f"{answer.feedback or '(none)'}\nRevise the plan and submit it again with ExitPlanMode.")
