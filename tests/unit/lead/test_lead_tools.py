"""The lead's AnswerPlan approves a plan into any mode a plan can be approved into
(ops.approvals.PLAN_WORKING_MODES, the one list), `auto` included, and never above the lead's own
mode (core.records.permissions.MODE_ORDER: plan < default < acceptEdits < auto <
bypassPermissions)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.records.protocol import PlanApprovalRequest, PlanApprovalResponse
from swarm.core.team.team import Team
from swarm.lead.lead_tools import AnswerPlan, AnswerPlanInput, Mode
from swarm.ops.approvals import PLAN_WORKING_MODES, pending_plans
from swarm.runtime.tools.base import ToolContext, run_tool


class LeadIn:
    """The lead process as AnswerPlan sees it: its own mode, and what it tells the person."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.notices: list[str] = []

    def notice(self, text: str) -> None:
        self.notices.append(text)


def answer(team: Team, lead_mode: str, permission_mode: str) -> tuple[LeadIn, str, bool]:
    host = LeadIn(lead_mode)
    ctx = ToolContext(team=team, name=LEAD_NAME, cwd=Path.cwd(), host=host)  # type: ignore[arg-type]
    result = run_tool(AnswerPlan(), {"name": "alice", "approve": True,
                                     "permission_mode": permission_mode}, ctx)
    return host, result.content, result.is_error


def sent_to_alice(team: Team) -> list[PlanApprovalResponse]:
    return [m for m in (mail.structured() for mail in team.inbox("alice").messages())
            if isinstance(m, PlanApprovalResponse)]


def test_the_tool_offers_every_mode_a_plan_can_be_approved_into() -> None:
    schema = AnswerPlan().input_schema["properties"]["permission_mode"]
    assert schema == {"type": "string", "enum": list(PLAN_WORKING_MODES)}
    assert "auto" in schema["enum"]
    for mode in PLAN_WORKING_MODES:
        assert AnswerPlanInput.model_validate(
            {"name": "w", "approve": True, "permission_mode": mode}).permission_mode == mode
    for refused in ("plan", "bypassPermissions", "yolo"):
        with pytest.raises(ValueError, match="permission_mode"):
            AnswerPlanInput.model_validate({"name": "w", "approve": True,
                                            "permission_mode": refused})


@pytest.mark.parametrize("lead_mode", ["auto", "bypassPermissions"])
def test_a_lead_in_auto_or_above_approves_a_plan_into_auto(team: Team, lead_mode: str) -> None:
    team.send(LEAD_NAME, PlanApprovalRequest(plan="1. do it"), sender="alice")
    host, said, is_error = answer(team, lead_mode, "auto")
    assert not is_error, said
    assert said == "approved the plan of alice"
    (response,) = sent_to_alice(team)
    assert response.approve is True and response.permission_mode == "auto"
    assert pending_plans(team) == []
    assert host.notices == ["approved the plan of alice"]


@pytest.mark.parametrize("lead_mode", ["default", "acceptEdits"])
def test_a_lead_below_auto_cannot_grant_it(team: Team, lead_mode: str) -> None:
    team.send(LEAD_NAME, PlanApprovalRequest(plan="1. do it"), sender="alice")
    host, said, is_error = answer(team, lead_mode, "auto")
    assert is_error
    assert said == (f"permission mode auto is above the lead's own ({lead_mode}): a member"
                    f" grants at most its own mode; ask for {lead_mode} or lower")
    assert sent_to_alice(team) == [] and len(pending_plans(team)) == 1  # nothing was answered
    assert host.notices == []


def test_the_modes_the_lead_names_are_the_cores() -> None:
    """SpawnTeammate's and SetMode's `permission_mode`: every mode, the cap checks the rest."""
    assert get_args(Mode) == PERMISSION_MODES
