"""The one suggestion operation the CLI (and later the dashboard and the editor channel) share:
for a pending request, the rules that would have allowed it, narrowest first
(core.shell.suggest), with the scopes they can be added at; adding one at a scope; and over
the decision records, the calls people approved at least N times that no rule covers yet.

Scopes: `member` (the requester's own rules), `team` (the team's, as `--always` adds). Never
the project's files: a checkout's configuration may only tighten."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any

from msgspec import Struct

from swarm.core.records.team_config import TeamConfig
from swarm.core.shell.rules import validate_rule
from swarm.core.shell.suggest import suggestions
from swarm.core.team import decisions
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from swarm.ops.approvals import find_request, requester

SCOPES = ("member", "team")


class Offer(Struct, dict=True):
    rules: tuple[str, ...]
    covers: str
    scopes: tuple[str, ...]  # e.g. ("member alice", "team")


def offer(team: Team, request_id: str) -> list[Offer]:
    """The suggestions for a pending request, narrowest first, each with its scopes."""
    found = find_request(team, request_id)
    member = requester(team, found.message.sender, found.request.agent_id)
    cwd = Path(member.cwd or ".")
    return [Offer(s.rules, s.covers, (f"member {member.name}", "team"))
            for s in suggestions(found.request.tool_name, found.request.input, cwd)]


def add(team: Team, member: str, rules: tuple[str, ...], scope: str) -> None:
    """Add `rules` at `scope` (member: `member`'s own allow rules; team: the team's)."""
    if scope not in SCOPES:
        raise BadInputError(f"--scope must be one of {', '.join(SCOPES)}")
    checked = [validate_rule(r) for r in rules]
    if scope == "team":
        team.update(functools.partial(_add_team, rules=checked))
    else:
        now = team.config().member(member)
        if now is None:
            raise BadInputError(f"no member {member!r}")
        team.update_member(member, allow_rules=list(dict.fromkeys([*now.allow_rules,
                                                                   *checked])))


def _add_team(config: TeamConfig, rules: list[str]) -> None:
    config.allowed_rules = list(dict.fromkeys([*config.allowed_rules, *rules]))


def frequent(team: Team, min_count: int) -> list[dict[str, Any]]:
    """Narrow rules for the calls a person or the lead approved at least `min_count` times,
    by member (from the decision records: the call line is all they keep of a Bash call)."""
    counts: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for member in team.config().members:
        cwd = Path(member.cwd or ".")
        for record in decisions.calls(team.name, member.name):
            if record.get("who") in ("person", "lead", "lead or person") and \
                    record.get("behavior") == "allow" and record.get("tool") == "Bash":
                command = str(record.get("call", "")).removeprefix("Bash: ")
                offers = suggestions("Bash", {"command": command}, cwd)
                narrow = [s for s in offers if s.covers != "exactly this call"]
                if narrow:
                    counts[(member.name, narrow[0].rules)] += 1
    return [{"member": name, "rules": list(rules), "approved": n}
            for (name, rules), n in counts.most_common() if n >= min_count]
