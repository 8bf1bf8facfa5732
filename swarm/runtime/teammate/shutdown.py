"""A teammate's side of a shutdown request: the request its current turn answers, the last one
it was asked, whether one was approved (the process then exits after the turn), and approving
without the model when the model cannot answer (a limit, a failed turn, an unreachable API)."""

from __future__ import annotations

from typing import Any

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import ShutdownRequest, ShutdownResponse
from swarm.core.team.team import Team


class Shutdown:
    def __init__(self, team: Team, name: str) -> None:
        self.team, self.name = team, name
        self.pending: ShutdownRequest | None = None  # the last request it was asked
        self.answering: ShutdownRequest | None = None  # the request this turn began with
        self.approved = False

    def sent(self, message: Any) -> None:
        """A structured message its model sent (SendMessage): an approving answer to the
        pending request ends the process after the turn."""
        if (isinstance(message, ShutdownResponse) and self.answering is not None
                and message.request_id == self.answering.request_id):
            self.answering = None  # answered by its model: a later failing call changes nothing
        pending = self.pending
        if (isinstance(message, ShutdownResponse) and message.approve and pending is not None
                and message.request_id == pending.request_id):
            self.approved = True

    def pending_id(self) -> str | None:
        return self.pending.request_id if self.pending else None

    def approve_without_model(self, request: ShutdownRequest, why: str) -> None:
        self.pending = request
        reply = ShutdownResponse(request_id=request.request_id, approve=True,
                                 reason=f"{why}: shutting down without the model")
        self.team.send(LEAD_NAME, reply, sender=self.name)
        self.sent(reply)
