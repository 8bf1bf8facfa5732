"""What `swarm interrupt` says it did, from the state the member was in: SIGINT aborts a turn
and nothing else (a teammate ignores it while starting, idle or shutting down)."""

from __future__ import annotations

import pytest

from swarm.ops.member.control import interrupted_line
from swarm.ops.member.health import MemberStatus


def status(state: str) -> MemberStatus:
    return MemberStatus("w1", "w1@crew", state, "hidden", None, 1234, None, 0, 0, 0, 0.0, None,
                        None, None, None, "shell")


@pytest.mark.parametrize("state", ["working", "waiting_permission", "awaiting_plan"])
def test_a_member_in_its_turn_is_interrupted(state: str) -> None:
    assert interrupted_line(status(state)) == f"interrupted w1 ({state})"


@pytest.mark.parametrize("state", ["starting", "idle", "shutting_down"])
def test_a_member_outside_a_turn_had_nothing_to_interrupt(state: str) -> None:
    assert interrupted_line(status(state)) == f"w1 is {state}: there was no turn to interrupt"
