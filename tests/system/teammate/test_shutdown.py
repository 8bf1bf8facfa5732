"""`swarm shutdown` reports a member's own words on why it left, even when the member answers
and exits between two of the command's looks (it reads states first: a member sends its answer
before it exits, so one seen exited has its answer in the lead's box already)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import ShutdownRequest, ShutdownResponse
from swarm.core.records.state import AgentState
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import update_state, write_state
from swarm.core.team.team import Team
from swarm.ops.member import shutdown as stopping


def test_an_answer_sent_just_before_the_exit_is_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    team = Team.create("alpha")
    team.add_member("w")
    stand_in = subprocess.Popen(["sleep", "30"])  # the member's live process
    try:
        write_state("alpha", "w", AgentState(state="working", pid=stand_in.pid,
                                             started_at=process_start_time(stand_in.pid)))
        looks = stopping._shutdown_answers

        def answers_then_member_leaves(box: Any, asked: dict[str, str]) -> Any:
            found = looks(box, asked)
            if not found:  # the member answers and exits just after this look
                request = next(m.structured() for m in Team("alpha").inbox("w", checked=False).messages()
                               if isinstance(m.structured(), ShutdownRequest))
                team.send(LEAD_NAME, ShutdownResponse(
                    request_id=request.request_id, approve=True,  # type: ignore[union-attr]
                    reason="model API failing (500): shutting down without the model"),
                    sender="w")

                def exited(state: AgentState) -> None:
                    state.state, state.detail = "exited", "shut down"

                update_state("alpha", "w", exited)
            return found

        monkeypatch.setattr(stopping, "_shutdown_answers", answers_then_member_leaves)
        (outcome,) = stopping.shutdown(team, ["w"], timeout=10)
    finally:
        stand_in.kill()
        stand_in.wait()
    assert outcome.result == "exited"
    assert outcome.reason == "model API failing (500): shutting down without the model"
