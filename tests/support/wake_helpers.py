"""What the tests of the lead's wake (swarm.lead.wake_policy, swarm.lead.settle, replayed wakes)
share: a team whose members are registered as working, their state and reports written as the
teammates would, and a recorder in place of the lead's terminal."""

from __future__ import annotations

import os
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import IdleNotification
from swarm.core.records.state import AgentState
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.lead import settle
from swarm.lead import wake_policy as wake
from swarm.lead.wake_policy import Watch
from swarm.ops.approvals import Pending
from tests.support.helpers import wait_until


class Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.requests: list[Pending] = []
        self.settled: list[Pending] = []

    def message(self, sender: str, color: str | None, text: str) -> None:
        self.lines.append(f"{sender}: {text}")

    def notice(self, text: str) -> None:
        self.lines.append(text)

    def request(self, pending: Pending) -> None:
        self.requests.append(pending)

    def resolved(self, pending: Pending) -> None:
        self.settled.append(pending)


def set_state(team: Team, name: str, state: str, **fields: Any) -> None:
    write_state(team.name, name, AgentState(state=state, pid=os.getpid(),  # type: ignore[arg-type]
                                            started_at=process_start_time(os.getpid()), **fields))


def idle(team: Team, name: str, summary: str, reason: str = "available") -> None:
    set_state(team, name, "idle", idle_reason=reason)
    team.send(LEAD_NAME, IdleNotification(sender=name, summary=summary,
                                          idle_reason=reason),  # type: ignore[arg-type]
              sender=name)


@pytest.fixture
def working_team() -> Team:
    """Team `w`: alice and bob registered as working (the lead's wake tests name it `workers`)."""
    team = Team.create("w")
    for name in ("alice", "bob"):
        team.add_member(name, model="shell")
        set_state(team, name, "working")
    return team


def woken(watch: Watch) -> wake.Wake:
    """The next wake, once the settle window of a held report has passed (lead.settle)."""
    return wait_until(watch.next_wake, 5 + settle.MAX_HOLD, message="the lead's next wake")


def texts(found: wake.Wake) -> list[str]:
    return [b["text"] for b in found.blocks]


def lead_unread(team: Team) -> list[Any]:
    return team.inbox(LEAD_NAME, checked=False).unread()
