"""The lead's side of attention: a question that waits for the person, as an Alert
(core.team.attention), and when it is denied unanswered (the lead denies requests and plans alike
at SWARM_PERMISSION_TIMEOUT, counted from the request's timestamp)."""

from __future__ import annotations

import time

from swarm import settings
from swarm.core.records.protocol import PermissionRequest
from swarm.core.team.attention import Alert, ring, terminal_env, until
from swarm.lead.wake_policy import describe_request
from swarm.ops.approvals import Pending
from swarm.ops.member.health import age_s


def deadline(pending: Pending) -> float:
    return time.time() - age_s(pending.message.timestamp) + settings.permission_timeout()


def left(pending: Pending) -> str:
    """`denied at 14:55:03 (in 4m58s) unless answered`."""
    return f"denied {until(deadline(pending))} unless answered"


def answer_command(pending: Pending) -> str:
    if isinstance(pending.request, PermissionRequest):
        return f"swarm permissions approve {pending.request.request_id[:8]}"
    return f"swarm plans approve {pending.message.sender}"


def ring_for(team: str, pending: Pending) -> None:
    """The lead's own terminal rings: the person at it is who answers."""
    alert = Alert(team=team, sender=pending.message.sender, kind=pending.request.type,
                  request_id=pending.request.request_id, text=describe_request(pending),
                  answer=answer_command(pending), deadline=deadline(pending))
    ring(alert, terminal_env())
