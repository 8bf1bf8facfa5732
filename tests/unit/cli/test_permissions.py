"""`swarm permissions` in-process (swarm/cli/permissions.py)."""

from __future__ import annotations

from pathlib import Path

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import (
    Message,
    PermissionRequest,
    PermissionResponse,
    dump_structured,
)
from swarm.core.team.team import Team
from tests.support.helpers import CaptureFixture, run_cli


def test_deny_needs_no_reason(capsys: CaptureFixture, tmp_path: Path) -> None:
    team = Team.create("forge")
    team.add_member("w1", cwd=str(tmp_path))
    request = PermissionRequest(agent_id=f"w1@{team.name}", tool_name="Bash",
                                description="list", input={"command": "ls"})
    team.inbox(LEAD_NAME, checked=False).deliver([Message(sender="w1",
                                                        text=dump_structured(request))])
    code, out, err = run_cli(capsys, "permissions", "deny", request.request_id[:8],
                             "--team", team.name)
    assert code == 0, err
    assert out.strip() == "denied Bash for w1"
    (answer,) = [s for m in team.inbox("w1", checked=False).messages()
                 if isinstance(s := m.structured(), PermissionResponse)]
    assert not answer.approve and answer.feedback == "denied by the person"

