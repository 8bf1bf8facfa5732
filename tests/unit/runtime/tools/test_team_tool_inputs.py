"""Semantic booleans: where a model gives a boolean (a shutdown or plan response's `approve`, a
permission answer, the Agent tool's `run_in_background`), the strings "yes"/"no" and
"true"/"false" (any case) are taken as the booleans they name, as Claude Code takes them; any
other string is still refused with one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import (
    PermissionResponse,
    PlanApprovalResponse,
    ShutdownRequest,
    ShutdownResponse,
    validate_structured,
)
from swarm.core.team.team import Team
from swarm.errors import ProtocolError, ToolError
from swarm.lead.lead_tools import AnswerPermissionInput, AnswerPlanInput
from swarm.runtime.subagents.tools import AgentTool, SubagentRequest
from swarm.runtime.tools.base import ToolContext, run_tool
from swarm.runtime.tools.team_tools import SendMessage

YES = ("yes", "Yes", "YES", "true", "True", " yes ")
NO = ("no", "No", "false", "FALSE")


@pytest.mark.parametrize("word", YES)
def test_a_shutdown_response_approves_with_yes(word: str) -> None:
    message = validate_structured({"type": "shutdown_response", "request_id": "r1",
                                   "approve": word})
    assert isinstance(message, ShutdownResponse) and message.approve is True


@pytest.mark.parametrize("word", NO)
def test_a_plan_response_rejects_with_no(word: str) -> None:
    message = validate_structured({"type": "plan_approval_response", "request_id": "r1",
                                   "approve": word, "feedback": "split step 2"})
    assert isinstance(message, PlanApprovalResponse) and message.approve is False


def test_a_permission_response_and_its_always() -> None:
    message = validate_structured('{"type": "permission_response", "request_id": "r1",'
                                  ' "approve": "true", "always": "no"}')
    assert isinstance(message, PermissionResponse)
    assert message.approve is True and message.always is False


@pytest.mark.parametrize("value", ["maybe", "on", "1", "", 1])
def test_other_values_are_still_refused(value: Any) -> None:
    with pytest.raises(ProtocolError, match="invalid shutdown_response message: Expected `bool`"):
        validate_structured({"type": "shutdown_response", "request_id": "r1", "approve": value})


def test_a_refusal_still_needs_a_reason() -> None:
    with pytest.raises(ProtocolError, match="a shutdown_response that refuses must give a reason"):
        validate_structured({"type": "shutdown_response", "request_id": "r1", "approve": "no"})


class ShutdownHost:
    """The teammate's side of SendMessage: the pending request, what it sent."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.sent: list[Any] = []

    def pending_shutdown_id(self) -> str | None:
        return self.request_id

    def structured_sent(self, message: Any) -> None:
        self.sent.append(message)


def test_a_teammate_answers_a_shutdown_request_with_approve_yes(team: Team, tmp_path: Path
                                                                ) -> None:
    """What models write: the answer is sent, read by the lead as an approval."""
    request = ShutdownRequest(reason="done")
    host = ShutdownHost(request.request_id)
    ctx = ToolContext(team=team, name="alice", cwd=tmp_path, host=host)  # type: ignore[arg-type]
    result = run_tool(SendMessage(), {"to": "team-lead", "message": {
        "type": "shutdown_response", "approve": "yes"}}, ctx)
    assert not result.is_error, result.content
    assert result.content == "sent shutdown_response to team-lead (approved: finishing)"
    (sent,) = host.sent
    assert sent.approve is True and sent.request_id == request.request_id
    (mail,) = [m for m in team.inbox("team-lead").messages() if m.sender == "alice"]
    stored = mail.structured()
    assert isinstance(stored, ShutdownResponse) and stored.approve is True
    assert '"approve":true' in mail.text  # written as a boolean, whatever the model wrote


@pytest.mark.parametrize(("word", "background"), [("yes", True), ("false", False),
                                                   ("True", True)])
def test_the_agent_tools_run_in_background(word: str, background: bool) -> None:
    request = SubagentRequest.parse(AgentTool().parse(
        {"description": "d", "prompt": "p", "run_in_background": word}))
    assert request.background is background


def test_the_agent_tool_still_refuses_other_strings() -> None:
    with pytest.raises(ToolError, match="run_in_background: Input should be a valid boolean"):
        AgentTool().parse({"description": "d", "prompt": "p", "run_in_background": "later"})
    # The schema the model is shown still says boolean.
    assert AgentTool().input_schema["properties"]["run_in_background"] == {"type": "boolean"}


def test_the_leads_answers_take_them_too() -> None:
    assert AnswerPlanInput.model_validate({"name": "w", "approve": "no"}).approve is False
    answer = AnswerPermissionInput.model_validate({"request_id": "r", "approve": "Yes",
                                                   "always": "false"})
    assert answer.approve is True and answer.always is False
    with pytest.raises(ValueError, match="approve"):
        AnswerPlanInput.model_validate({"name": "w", "approve": "on"})
