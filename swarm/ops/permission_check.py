"""`swarm permissions check` and `swarm permissions log`: which tier would decide a call for a
member and why (and what the reviewer would be shown), without running anything; and the
decision records of what did happen (core.team.decisions), one row per call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec import Struct

from swarm.core.records.names import LEAD_NAME
from swarm.core.team import decisions
from swarm.core.team.review import build_request
from swarm.core.team.team import Team
from swarm.errors import NotFoundError
from swarm.runtime.clis.permission import NamedTool, current_mode
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.tools.registry import all_tools


class CheckResult(Struct, dict=True):
    member: str
    mode: str
    tool: str
    input: dict[str, Any]
    tier: str
    behavior: str  # allow | deny | ask (a person, or the lead with --approvals lead)
    why: str
    rule: str | None = None
    person_only: bool = False
    review_request: dict[str, Any] | None = None  # what the reviewer would be shown


def check(team: Team, name: str | None, tool_name: str, args: dict[str, Any]) -> CheckResult:
    member = team.config().member(name or LEAD_NAME)
    if member is None:
        raise NotFoundError(f"no member {name!r} in team {team.name!r}")
    mode = current_mode(team, member.name)
    policy = PermissionPolicy.for_member(team, member, Path(member.cwd or "."), None, mode=mode)
    tool = all_tools().get(tool_name) or NamedTool(tool_name)
    decision, _ = policy.decide(tool, args, dry=True)
    request = None
    if decision.tier == "reviewer" and decision.behavior == "ask":
        request = build_request(team, member, tool_name, args, str(policy.cwd), mode,
                                decision.reason)
    return CheckResult(member=member.name, mode=mode, tool=tool_name, input=args,
                       tier=decision.tier or "mode", behavior=decision.behavior,
                       why=decision.reason, rule=decision.rule,
                       person_only=decision.person_only, review_request=request)


def log_rows(team: Team, name: str | None) -> list[dict[str, Any]]:
    """Every decision of `name` (or of every member), oldest first, each with its member."""
    names = [name] if name else [m.name for m in team.config().members]
    rows = [{"member": n, **r} for n in names for r in decisions.calls(team.name, n)]
    return sorted(rows, key=lambda r: str(r.get("ts", "")))
