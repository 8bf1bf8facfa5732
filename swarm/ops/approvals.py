"""The lead's side of asking: pending permission requests and plans, and the answers to them.

A request is pending while its message is unread in the lead's mailbox; answering marks it
read, so a second answer to the same id is refused (exit 2) instead of sent twice. A request is
the requester's own words (anyone who can write the mailbox can forge one): it counts only when
it names its sender in this team, and is approved only for a tool that member has (its
definition's, its MCP servers', a typed subagent type's own servers' through its Agent tool);
the rule an `always` adds is `real_input.exact_rule` of the real input.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msgspec import Struct

from swarm.core.agents.definitions import effective_tools, get_definition, listed, load_definitions
from swarm.core.agents.memory import memory_tools
from swarm.core.records import base as records
from swarm.core.records.names import LEAD_NAME, TEAM_TOOLS
from swarm.core.records.permissions import PERMISSION_MODES, ModeCap
from swarm.core.records.protocol import (
    Message,
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    sender_may_send,
)
from swarm.core.records.team_config import Member, TeamConfig
from swarm.core.team.team import Team
from swarm.core.text.real_input import (
    SHOWN_LIMIT,
    exact_rule,
    request_line,
    shown_input,
    typed_rule,
)
from swarm.core.trust.workspace import decide
from swarm.errors import BadInputError, NotAllowedError, NotFoundError, SwarmError, ToolError
from swarm.runtime.extensions.loader import checkout_of
from swarm.runtime.tools.registry import all_tools

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,),
}


class Pending(Struct, dict=True):
    message: Message
    request: Any  # PermissionRequest | PlanApprovalRequest (Any: filtered by isinstance below)
    verdict: str | None = None  # once answered here: "approved", "denied (why)"

    @property
    def what(self) -> str:
        """What the call would really do, from its input (never the asker's own description)."""
        if not isinstance(self.request, PermissionRequest):
            return ""
        return shown_input(self.request.tool_name, self.request.input)

    def shown(self, limit: int = SHOWN_LIMIT) -> str:
        """For a person or the lead to decide on: the real input, and the asker's own words
        only marked as such."""
        if not isinstance(self.request, PermissionRequest):
            return "approve its plan"
        return request_line(self.request, limit)

    def as_dict(self) -> dict[str, Any]:
        return {"request_id": self.request.request_id, "from": self.message.sender,
                "timestamp": self.message.timestamp, "what": self.what,
                **{k: v for k, v in records.to_dict(self.request).items() if k != "type"}}


def _pending(team: Team, kind: type[PermissionRequest | PlanApprovalRequest]) -> list[Pending]:
    """Requests waiting in the lead's mailbox; one that does not come from the member it names
    is not a request (the lead reads it as a plain message)."""
    box = team.inbox(LEAD_NAME, checked=False)
    found = [Pending(m, m.structured()) for m in box.unread()]
    return sorted((p for p in found if isinstance(p.request, kind)
                   and sender_may_send(p.request, p.message.sender)
                   and names_this_team(team, p.request)),
                  key=lambda p: p.message.timestamp)


def names_this_team(team: Team, request: PermissionRequest | PlanApprovalRequest) -> bool:
    """A permission request names its asker in this team (`name@team`), not in another."""
    return not isinstance(request, PermissionRequest) or \
        request.agent_id.partition("@")[2] == team.name


# Verdicts given in this process, by request id, until the lead's wake policy takes them
# (`outcome`): the lead's tools, the person at the lead's prompt and its timeouts answer here.
_given: dict[str, str] = {}


def _answered(found: Pending, reply: PermissionResponse | PlanApprovalResponse) -> Pending:
    found.verdict = _verdict(reply)
    _given[reply.request_id] = found.verdict
    return found


def _verdict(reply: PermissionResponse | PlanApprovalResponse) -> str:
    return ("approved" if reply.approve else "denied") + (
        f" ({reply.feedback})" if reply.feedback else "")


def outcome(team: Team, pending: Pending) -> str:
    """How a request that left the lead's pending list ended: the verdict given in this
    process; else the answer another process sent (`swarm permissions` or `swarm plans` from a
    shell: its only record is the answer in the asker's mailbox); else it was withdrawn."""
    verdict = _given.pop(pending.request.request_id, None) or _sent_answer(team, pending)
    return verdict or "withdrawn unanswered (it was denied at the teammate's timeout)"


def _sent_answer(team: Team, pending: Pending) -> str | None:
    kind = PermissionResponse if isinstance(pending.request, PermissionRequest) \
        else PlanApprovalResponse
    try:
        box = team.inbox(pending.message.sender, checked=False)
        answers = [m.structured() for m in box.messages(include_archive=True)
                   if m.sender == LEAD_NAME]
    except (SwarmError, OSError):
        return None
    for answer in answers:
        if isinstance(answer, kind) and answer.request_id == pending.request.request_id:
            return _verdict(answer)
    return None


def pending_permissions(team: Team) -> list[Pending]:
    return _pending(team, PermissionRequest)


def pending_plans(team: Team) -> list[Pending]:
    return _pending(team, PlanApprovalRequest)


def find_request(team: Team, request_id: str) -> Pending:
    """A pending request by (a unique start of) its id, or by the name of the teammate asking
    (as `swarm plans approve NAME`): what a person types after reading `permissions list`."""
    wanted = request_id.strip()
    pending = pending_permissions(team)
    matches = [p for p in pending if p.message.sender == wanted.lower()]
    if len(matches) > 1:
        raise BadInputError(f"{wanted.lower()} has {len(matches)} pending requests: give the"
                            " request id (see `swarm permissions list`)")
    matches = matches or [p for p in pending if p.request.request_id.startswith(wanted)]
    if not wanted or not matches:
        raise NotFoundError(f"no pending permission request {request_id!r} (unknown or already "
                            "answered); see `swarm permissions list`")
    if len(matches) > 1:
        raise BadInputError(f"request id {request_id!r} is ambiguous: give more characters")
    return matches[0]


# -- who asks, for which tool: a request is the requester's own words, forgeable by anyone
# who can write the lead's mailbox ---------------------------------------------------------------
# An MCP tool as swarm names it: mcp__<server>__<tool>, letters, digits, `_` and `-` only
# (runtime/extensions/mcp_client.qualified_name), at most 64 characters.
MCP_TOOL = re.compile(r"mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+\Z")


def requester(team: Team, sender: str, agent_id: str) -> Member:
    """The member a request comes from: it names itself, in this team."""
    member = team.config().member(sender)
    if member is None or member.name == LEAD_NAME or agent_id != member.agent_id:
        raise BadInputError(f"{agent_id!r} is not a teammate of team {team.name!r}")
    return member


def _check_tool(team: Team, member: Member, tool_name: str) -> None:
    """Refuse a request for a tool the requester does not have (then nothing it asks for
    could run: the request is not one swarm made)."""
    why = _lacks(member, tool_name, team.config().policy_dir)
    if why:
        raise BadInputError(f"{member.name} has no tool {tool_name!r} ({why}): the request was"
                            " not made by swarm; deny it (`swarm permissions deny`)")


def _lacks(member: Member, tool_name: str, policy_dir: str | None) -> str | None:
    builtin = all_tools()
    mcp = len(tool_name) <= 64 and MCP_TOOL.match(tool_name) is not None
    if tool_name not in builtin and not mcp:
        return "no tool has that name"
    if member.host:  # its definitions are on another host: the name's shape is all we know
        return None
    cwd = Path(member.cwd or os.getcwd())
    # The same decision the agent process made for itself (runtime/teammate/agent.py).
    project = decide(cwd, checkout_of(member), granted=member.trusted_config).project
    try:
        definition = get_definition(member.agent_type, cwd, project=project,
                                    policy_dir=policy_dir)
    except SwarmError as exc:
        return f"its agent type cannot be read: {exc}"
    if listed(tool_name, definition.disallowed_tools):  # binding, through a subagent too
        return f"its agent type {definition.name} disallows it"
    names = effective_tools(definition, list(builtin), TEAM_TOOLS)
    names += memory_tools(definition, names)  # given for its memory file (its policy: that alone)
    # A subagent has only built-in tools its parent has; MCP tools of its type's own servers
    # too, unless the parent's definition disallows them (checked above): definitions.lends.
    delegates = "Agent" in names
    if not mcp:
        if tool_name in names:
            return None
        return f"its agent type {definition.name} does not give it"
    servers = [*member.mcp_servers, *_server_names(definition.mcp_servers)]
    if delegates:
        for other in load_definitions(cwd, project=project,
                                      policy_dir=policy_dir).definitions.values():
            servers += _server_names(other.mcp_servers)
    if any(tool_name.startswith(f"mcp__{server}__") for server in servers):
        return None
    return "it has no MCP server of that name"


def _server_names(entries: list[Any]) -> list[str]:
    return [n for e in entries for n in ([e] if isinstance(e, str) else list(e))]


def edited_input(tool_name: str, raw: str) -> dict[str, Any]:
    """An input edited when approving (`--input`): a JSON object its tool takes as it is, by the
    tool's input model, exactly (JSON's own types, no unknown field: a person's typo is not
    dropped silently). A tool swarm does not have (an MCP server's) checks its own input."""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BadInputError(f"--input is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadInputError("--input must be a JSON object")
    tool = all_tools().get(tool_name)
    if tool is not None:
        try:
            tool.parse(value, exact=True)
        except ToolError as exc:
            raise BadInputError(f"--input: {exc}") from None
    return value


def approve_permission(team: Team, request_id: str, always: bool = False,
                       new_input: str | None = None,
                       announce: Callable[[str], None] | None = None,
                       typed: str | None = None, by_model: bool = False) -> Pending:
    """Approve a pending request; with `always` also add the rule naming exactly this call
    (`approval_rule.exact_rule`), or with `typed` the rule the person typed; `announce` is given
    it first (whoever answers sees the exact rule before it exists). A request for a tool its
    asker does not have, or an `always` no exact rule can honour, is refused before anything."""
    found = find_request(team, request_id)
    request: PermissionRequest = found.request
    if by_model and request.person_only:  # the lead's model (AnswerPermission)
        raise NotAllowedError(f"only a person approves this request ({request.tier or 'ask'}"
                              " tier): it waits for `swarm permissions approve` or the lead's"
                              " person")
    member = requester(team, found.message.sender, request.agent_id)
    _check_tool(team, member, request.tool_name)
    updated = edited_input(request.tool_name, new_input) if new_input is not None else None
    rule = None
    if typed is not None:
        rule = typed_rule(typed, request.tool_name)
    elif always:
        rule = _exact(member, request.tool_name, updated or request.input)
    if rule is not None:
        if announce is not None:
            announce(rule)
        team.update(functools.partial(_add_rule, rule=rule))
    reply = PermissionResponse(request_id=request.request_id, approve=True,
                               updated_input=updated, always=rule is not None,
                               by="lead" if by_model else "person")
    team.send(found.message.sender, reply, sender=LEAD_NAME)
    team.inbox(LEAD_NAME, checked=False).mark_read([found.message.id])
    return _answered(found, reply)


def _exact(member: Member, tool_name: str, args: dict[str, Any]) -> str:
    return exact_rule(tool_name, args, Path(member.cwd or os.getcwd()))


def always_rule(team: Team, request_id: str) -> str:
    """The team rule `approve --always` would add for this request, without adding it (what
    `swarm top` shows before it is confirmed): the same computation, so both agree."""
    found = find_request(team, request_id)
    member = requester(team, found.message.sender, found.request.agent_id)
    return _exact(member, found.request.tool_name, found.request.input)


def alike(team: Team, request_id: str) -> list[Pending]:
    """Every pending request identical to this one (the same tool and the same input, from any
    member), this one first: what `swarm top`'s `Y` approves at once."""
    found = find_request(team, request_id)
    key = _canonical(found.request)
    return [found, *(p for p in pending_permissions(team)
                     if p.request.request_id != found.request.request_id
                     and _canonical(p.request) == key)]


def _canonical(request: PermissionRequest) -> str:
    return json.dumps([request.tool_name, request.input], sort_keys=True)


def _add_rule(config: TeamConfig, rule: str) -> None:
    if rule not in config.allowed_rules:
        config.allowed_rules.append(rule)


def deny_permission(team: Team, request_id: str, reason: str, by: str = "person") -> Pending:
    """`by`: who denies (person, lead: its model, timeout), for the decision record."""
    if not reason.strip():
        raise BadInputError("--reason is required: the teammate's model reads it")
    found = find_request(team, request_id)
    reply = PermissionResponse(request_id=found.request.request_id, approve=False, feedback=reason,
                               by=by)
    team.send(found.message.sender, reply, sender=LEAD_NAME)
    team.inbox(LEAD_NAME, checked=False).mark_read([found.message.id])
    return _answered(found, reply)


def _plan_of(team: Team, name: str) -> Pending:
    member = team.member(name)
    plans = [p for p in pending_plans(team) if p.message.sender == member.name]
    if not plans:
        raise NotFoundError(f"{member.name} has no plan waiting for approval; see `swarm plans list`")
    return plans[-1]


# Modes a plan can be approved into: never plan again, never bypassPermissions (trust.md).
PLAN_WORKING_MODES = tuple(m for m in PERMISSION_MODES if m not in ("plan", "bypassPermissions"))


def answer_plan(team: Team, name: str, approve: bool, feedback: str | None = None,
                mode: str | None = None, cap: ModeCap | None = None) -> Pending:
    """Approve (into `mode`, default: the member's working mode) or reject (with feedback).
    `cap`: the answering member's own mode, which `mode` may not exceed (None: a person)."""
    if not approve and not (feedback or "").strip():
        raise BadInputError("--feedback is required when rejecting a plan")
    if mode is not None and not approve:
        raise BadInputError("--mode is for approving: a rejected plan stays in plan mode")
    if mode is not None and mode not in PLAN_WORKING_MODES:
        raise BadInputError(f"--mode must be one of {', '.join(PLAN_WORKING_MODES)} (got {mode!r};"
                            " bypassPermissions is never granted to a plan-mode agent)")
    if mode is not None and cap is not None:
        cap.check(mode)
    found = _plan_of(team, name)
    # The plans from this teammate waiting now are superseded by this answer; read before it is
    # sent, so a plan the teammate sends as soon as it arrives stays waiting.
    stale = [p.message.id for p in pending_plans(team) if p.message.sender == found.message.sender]
    reply = PlanApprovalResponse(request_id=found.request.request_id, approve=approve,
                                 feedback=feedback, permission_mode=mode)
    team.send(found.message.sender, reply, sender=LEAD_NAME)
    team.inbox(LEAD_NAME, checked=False).mark_read(stale)
    return _answered(found, reply)
