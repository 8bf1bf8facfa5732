"""The lead's tools: SpawnTeammate (the spawner `swarm spawn` uses), SendMessage (as teammates,
plus `*` and shutdown_request), the Task* tools, TeamStatus, StopTeammate (the control code
`swarm kill` uses), SetMode (as `swarm mode`), and with `--approvals lead` AnswerPermission / AnswerPlan (the approvals
code `swarm permissions` / `swarm plans` use); `Agent`, `AgentStatus` and `AgentStop` (subagents, run
by the lead process as threads, like a teammate's); plus the file and shell tools unless
`--coordinator` (a coordinator keeps typed subagents: delegating to them is delegating; it
cannot fork, since a fork would have only its team tools).

Bad input (an unknown agent type or model, a taken name, too many teammates, a spawn that
fails) is an error result the lead model can read and act on, never a crash.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Protocol, cast

from msgspec import Struct
from pydantic import AfterValidator, WithJsonSchema

from swarm.core import kinds
from swarm.core.records.names import EFFORT_LEVELS, LEAD_NAME, validate_effort
from swarm.core.records.permissions import PERMISSION_MODES, ModeCap
from swarm.core.records.protocol import ShutdownRequest, structured_object, validate_structured
from swarm.core.text.readable import will_not_read
from swarm.errors import BadInputError, ToolError
from swarm.lead.team_view import DONE_STATES, task_tally
from swarm.lead.wake_policy import Watch, describe_request
from swarm.ops.approvals import (
    PLAN_WORKING_MODES,
    answer_plan,
    approve_permission,
    deny_permission,
)
from swarm.ops.member import control
from swarm.ops.member.health import observe, observe_member
from swarm.ops.member.restart import wake
from swarm.ops.member.spawner import SpawnRequest, spawn
from swarm.runtime.models import default_model_spec
from swarm.runtime.subagents.tool_inputs import AgentInput
from swarm.runtime.subagents.tools import AgentStatusTool, AgentStopTool, AgentTool
from swarm.runtime.teammate.console import brief
from swarm.runtime.tools import builtin as ft
from swarm.runtime.tools import team_tools as tt
from swarm.runtime.tools.base import Tool, ToolContext, ToolHost, ToolResult
from swarm.runtime.tools.schema import BlankIsNone, NoInput, SemanticBool, ToolInput

FILE_TOOLS = ("Read", "Glob", "Grep", "Bash", "Write", "Edit")
# What the lead may send as a structured message; answers to requests go through AnswerPermission
# and AnswerPlan (they keep the pending list right), responses are a teammate's to send.
LEAD_SENDS = ("shutdown_request", "task_assignment")


class SpawnDefaults(Struct, dict=True):
    backend: str | None  # --backend (None: auto)
    cwd: str  # --cwd
    model: str | None  # --teammate-model (`inherit`: the lead's model)
    max_teammates: int
    permission_mode: str = "default"  # the lead's: a teammate starts in it unless told lower
    allow: tuple[str, ...] = ()  # the lead's rules, which its teammates inherit
    deny: tuple[str, ...] = ()
    trust_project: bool = False  # the session trusts the project for this run only


class LeadHost(ToolHost, Protocol):
    """What the lead's tools need of the lead process."""

    spawn_defaults: SpawnDefaults
    watch: Watch
    mode: str  # the lead's own permission mode: the most it grants (SpawnTeammate, AnswerPlan)
    depth: int  # its delegation depth from the person (its teammates are one more)

    def notice(self, text: str) -> None: ...

    def delete_team(self) -> str:
        """TeamDelete, once no teammate works (or force): end the team; say what was done."""


def _host(ctx: ToolContext) -> LeadHost:
    return cast(LeadHost, ctx.host)


Mode = Literal["default", "acceptEdits", "plan", "auto", "bypassPermissions"]  # core.records.permissions' modes


def _agent_cli(value: str) -> str:
    found = kinds.find(value)
    if found is None or not found.is_cli or found.needs_command:
        raise ValueError(f"Input should be one of {', '.join(_LEADS_AGENTS)}")
    return found.name


# What the lead may name: every agent CLI but one whose command a person must give.
_LEADS_AGENTS = [k.name for k in kinds.agent_clis() if not k.needs_command]


# An agent CLI of the registry of teammate kinds, by name or alias (stored by name).
# The model is shown the canonical names; an alias it writes is taken too.
AgentCli = Annotated[str, AfterValidator(_agent_cli), WithJsonSchema(
    {"type": "string", "enum": _LEADS_AGENTS})]


def _effort(value: str) -> str:
    try:
        return str(validate_effort(value, "effort"))
    except BadInputError:
        raise ValueError(f"Input should be one of {', '.join(EFFORT_LEVELS)}") from None


Effort = Annotated[str, AfterValidator(_effort), WithJsonSchema(
    {"type": "string", "enum": list(EFFORT_LEVELS)})]


class SpawnTeammateInput(ToolInput):
    name: str
    prompt: str
    agent_type: str | None = None
    model: str | None = None
    worktree: SemanticBool | None = None
    plan_mode_required: SemanticBool | None = None
    permission_mode: Annotated[Mode | None, BlankIsNone] = None
    max_budget_usd: float | None = None
    max_tokens: int | None = None
    agent: Annotated[AgentCli | None, BlankIsNone] = None
    effort: Annotated[Effort | None, BlankIsNone] = None


class SpawnTeammate(Tool):
    name = "SpawnTeammate"
    description = (
        "Start a teammate: its own process with its own context window, tools and model. `prompt`"
        " is its first message: make it self-contained (the goal, the files, what done looks"
        " like, to report back with SendMessage). Idle teammates also claim tasks from the task"
        " list. agent_type picks an agent definition (default general-purpose); model defaults"
        " to the team's teammate model. permission_mode: at most your own mode (a higher one is"
        " refused). max_budget_usd / max_tokens: its spending cap (its subagents' included):"
        " it stops at it, mid-reply if need be. agent: the teammate is that agent CLI"
        f" ({', '.join(k.name for k in kinds.agent_clis())}), driven by swarm, with the team's"
        " tools; model is then that CLI's. effort: how hard it thinks (low for routine"
        " edits, high or max for planning and hard problems; default: its definition's)."
    )
    input_model = SpawnTeammateInput

    def run(self, args: SpawnTeammateInput, ctx: ToolContext) -> ToolResult:
        host = _host(ctx)
        defaults = host.spawn_defaults
        name = args.name.strip().lower()
        existing = ctx.team.config().member(name)
        if existing is not None:
            state = observe_member(ctx.team, existing).state if name != LEAD_NAME else "you"
            raise ToolError(f"{name!r} is already taken ({state}): pick another name, or send"
                            " the member a message with SendMessage")
        running = [s for s in observe(ctx.team) if s.state not in DONE_STATES]
        if len(running) >= defaults.max_teammates:
            raise ToolError(f"the team already runs {len(running)} teammates, the most this"
                            f" session allows (--max-teammates {defaults.max_teammates}): give"
                            " work to one of them, or stop one with StopTeammate first")
        # spawn checks the model can run here (its provider's credentials) before registering.
        model = args.model if args.agent else (
            args.model or defaults.model or default_model_spec()[0])
        result = spawn(ctx.team, SpawnRequest(
            name, prompt=args.prompt,
            agent_type=args.agent_type or "general-purpose", model=model,
            backend=defaults.backend, cwd=defaults.cwd, worktree=bool(args.worktree),
            plan_mode_required=bool(args.plan_mode_required),
            permission_mode=args.permission_mode,
            inherit_mode=defaults.permission_mode, max_budget_usd=args.max_budget_usd,
            max_tokens=args.max_tokens, depth=host.depth + 1,
            allow=defaults.allow, deny=defaults.deny, cap=ModeCap("the lead", host.mode),
            trust_project=defaults.trust_project, agent=args.agent, effort=args.effort,
        ))
        host.notice(f"spawned {result.name} ({result.model}, {result.permission_mode},"
                    f" {result.backend})")
        said = f"warning: {result.effort_warning}\n" if result.effort_warning else ""
        if said:  # its model cannot take the effort: the lead and the person hear it
            host.notice(said.strip())
        return ToolResult(f"{said}spawned {result.name} (model {result.model}, permission mode"
                          f" {result.permission_mode}, backend {result.backend}). It has your"
                          " prompt; it reports back with SendMessage when it is done.")

    def describe(self, args: dict[str, Any]) -> str:
        return f"SpawnTeammate {args.get('name')}"


class LeadSendMessage(tt.SendMessage):
    description = (
        "Send a message to a teammate by name, or to '*' (every teammate; plain text only)."
        " `message` is plain text (then `summary`, a 5-10 word preview, is required), or"
        ' {"type": "shutdown_request", "reason": "..."} to ask a teammate to finish and exit'
        " (it answers with shutdown_response; it may refuse, with a reason)."
    )

    def run(self, args: tt.SendMessageInput, ctx: ToolContext) -> ToolResult:
        to = args.to.strip().lower()
        if to == LEAD_NAME:
            raise ToolError("you are team-lead: send to a teammate's name or '*'")
        if ctx.subagents is not None and ctx.subagents.owns(to):  # one of the lead's subagents
            return super().run(args.model_copy(update={"to": to}), ctx)
        message = args.message
        message = structured_object(message) or message  # JSON text of a protocol object too
        if not isinstance(message, dict):
            result = super().run(args.model_copy(update={"to": to}), ctx)
            if result.is_error:
                return result
            return ToolResult(self._receipt(to, "", ctx))
        kind = message.get("type")
        if kind not in LEAD_SENDS:
            hint = {"permission_response": " (answer requests with AnswerPermission)",
                    "plan_approval_response": " (answer plans with AnswerPlan)"}.get(str(kind), "")
            raise ToolError(f"the lead sends only plain text, {', '.join(LEAD_SENDS)}{hint}")
        structured = validate_structured(message)
        ctx.team.send(to, structured, sender=LEAD_NAME)
        if isinstance(structured, ShutdownRequest):  # never woken just to be shut down
            _host(ctx).watch.note_shutdown(ctx.team.member(to).name, structured.request_id)
            return ToolResult(f"sent {structured.type} to {to}")
        return ToolResult(self._receipt(to, f"{structured.type} ", ctx))

    @staticmethod
    def _receipt(to: str, what: str, ctx: ToolContext) -> str:
        """What became of the message: delivered and waiting to be read, or its recipient will
        not read it (dead; exited and not woken). A message to an exited (not dead)
        teammate respawns it with its transcript."""
        if to == "*":
            gone = [s for s in observe(ctx.team) if s.state in DONE_STATES]
            notes = [will_not_read(s.name, s.state, s.detail) for s in gone]
            return "\n".join([f"delivered {what}to every teammate (unread)", *notes])
        result = wake(ctx.team, to)
        if result.woken:
            _host(ctx).notice(result.describe())
            return f"delivered {what}to {to} (unread)\n{result.describe()}"
        if result.was in DONE_STATES:
            return will_not_read(result.name, result.was, result.detail)
        return f"delivered {what}to {to} (unread)"


class TeamStatus(Tool):
    name = "TeamStatus"
    description = ("Each teammate's state, current task, last report, turns, tokens and cost;"
                   " the task tally; requests waiting for an answer. Do not poll it: you are"
                   " woken when a teammate writes to you or the team goes quiet.")
    input_model = NoInput
    read_only = True

    def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        watch = _host(ctx).watch
        view = watch.view()
        lines = [f"{watch.member_line(s, view)} | turns {s.turns}, tokens {s.tokens},"
                 f" ${s.cost_usd:.4f}" for s in view.statuses] or ["(no teammates yet)"]
        lines.append(task_tally(view.tasks))
        for pending in watch.open_requests():
            lines.append(f"waiting for an answer: {pending.message.sender}:"
                         f" {describe_request(pending)} (request_id"
                         f" {pending.request.request_id})")
        return ToolResult("\n".join(lines))


class StopTeammateInput(ToolInput):
    name: str


class StopTeammate(Tool):
    name = "StopTeammate"
    description = ("Stop a teammate now (kill its process); its unfinished tasks go back to"
                   " pending. To let it finish cleanly, send it a shutdown_request instead.")
    input_model = StopTeammateInput

    def run(self, args: StopTeammateInput, ctx: ToolContext) -> ToolResult:
        name = args.name.strip().lower()
        killed = control.kill(ctx.team, name)
        if killed.was is not None:  # nothing ran: say so rather than "stopped"
            return ToolResult(killed.describe())
        _host(ctx).notice(f"stopped {name}")
        return ToolResult(f"stopped {name}; its unfinished tasks are pending again")


class SetModeInput(StopTeammateInput):
    mode: Mode
    reason: str | None = None


class SetMode(Tool):
    name = "SetMode"
    description = (f"Change a teammate's permission mode ({', '.join(PERMISSION_MODES)}; at"
                   " most your own); it applies from the teammate's next tool call.")
    input_model = SetModeInput

    def run(self, args: SetModeInput, ctx: ToolContext) -> ToolResult:
        name, mode = args.name.strip().lower(), args.mode
        status = control.set_mode(ctx.team, name, mode, args.reason or None,
                                  cap=ModeCap("the lead", _host(ctx).mode))
        later = f" when it next runs (it is {status.state})" if status.state in DONE_STATES \
            else " from its next tool call"
        _host(ctx).notice(f"set {status.name}'s mode to {mode}")
        return ToolResult(f"{status.name} is in {mode} mode{later}")


class AnswerPermissionInput(ToolInput):
    request_id: str
    approve: SemanticBool
    always: SemanticBool | None = None
    feedback: str | None = None
    updated_input: dict[str, Any] | None = None


class AnswerPermission(Tool):
    name = "AnswerPermission"
    description = ("Answer a teammate's permission request (its request_id). approve: run it;"
                   " always: also allow it for the whole team from now on; updated_input: run"
                   " this input instead; feedback: why (required to deny: the teammate reads it).")
    input_model = AnswerPermissionInput

    def run(self, args: AnswerPermissionInput, ctx: ToolContext) -> ToolResult:
        request_id = args.request_id
        if args.approve:
            edited = args.updated_input
            rules: list[str] = []
            found = approve_permission(ctx.team, request_id, always=bool(args.always),
                                       new_input=json.dumps(edited) if edited else None,
                                       announce=rules.append, by_model=True)
            verdict = "approved" + "".join(f" (always: added the team rule {r})" for r in rules)
        else:
            found = deny_permission(ctx.team, request_id, args.feedback or "denied by the lead",
                                    by="lead")
            verdict = "denied"
        _host(ctx).notice(f"{verdict}: {found.message.sender}'s {describe_request(found)}")
        return ToolResult(f"{verdict} {found.message.sender}'s request: {describe_request(found)}")


def _plan_working_mode(value: str) -> str:
    if value not in PLAN_WORKING_MODES:
        raise ValueError(f"Input should be one of {', '.join(PLAN_WORKING_MODES)}")
    return value


# A mode a plan can be approved into (ops.approvals' list, `auto` included); the lead's own
# mode caps it when the tool runs.
PlanWorkingMode = Annotated[str, AfterValidator(_plan_working_mode), WithJsonSchema(
    {"type": "string", "enum": list(PLAN_WORKING_MODES)})]


class AnswerPlanInput(ToolInput):
    name: str
    approve: SemanticBool
    feedback: str | None = None
    permission_mode: Annotated[PlanWorkingMode | None, BlankIsNone] = None


class AnswerPlan(Tool):
    name = "AnswerPlan"
    description = ("Approve or reject the plan a plan-mode teammate submitted. approve: it leaves"
                   " plan mode and works (in permission_mode, if given: at most your own mode);"
                   " reject: it revises the plan using your feedback (required).")
    input_model = AnswerPlanInput

    def run(self, args: AnswerPlanInput, ctx: ToolContext) -> ToolResult:
        approve, feedback = args.approve, args.feedback
        if not approve and not (feedback or "").strip():
            raise ToolError("feedback is required to reject a plan: say what to change")
        try:
            found = answer_plan(ctx.team, args.name, approve=approve, feedback=feedback or None,
                                mode=args.permission_mode,
                                cap=ModeCap("the lead", _host(ctx).mode))
        except BadInputError as exc:
            raise ToolError(str(exc)) from None
        verdict = "approved" if approve else "rejected"
        _host(ctx).notice(f"{verdict} the plan of {found.message.sender}")
        return ToolResult(f"{verdict} the plan of {found.message.sender}"
                          + (f" ({brief(str(feedback), 80)})" if feedback else ""))


class TeamDeleteInput(ToolInput):
    force: SemanticBool = False


class TeamDelete(Tool):
    name = "TeamDelete"
    description = (
        "End the team you lead, as `swarm team delete` does: stop every teammate, finish their"
        " worktrees (one with work is kept under $SWARM_HOME/kept-worktrees/), remove the"
        " team's files. Refused while teammates are still running (ask them to shut down"
        " first) unless force: true, which stops them.")
    input_model = TeamDeleteInput

    def run(self, args: TeamDeleteInput, ctx: ToolContext) -> ToolResult:
        alive = [m.name for m in ctx.team.live_members()]
        if alive and not args.force:
            return ToolResult(f"team {ctx.team.name} still has running teammates"
                              f" ({', '.join(alive)}): send each a shutdown_request and wait,"
                              " or call TeamDelete with force: true", is_error=True)
        return ToolResult(_host(ctx).delete_team())


def deleted_line(result: control.Deleted) -> str:
    """TeamDelete's answer: what `swarm team delete` prints, on one line."""
    stopped = f"; stopped {', '.join(result.stopped)}" if result.stopped else ""
    return "; ".join([f"deleted team {result.team}{stopped}",
                      *(tree.describe() for tree in result.worktrees)])


class CoordinatorAgent(AgentTool):
    """`Agent` for a `--coordinator` lead: typed subagents only."""

    description = AgentTool.description + " As a coordinator you cannot fork: give a subagent_type."

    def run(self, args: AgentInput, ctx: ToolContext) -> ToolResult:
        if not (args.subagent_type or "").strip():
            raise ToolError("a coordinator cannot fork (a fork would have only your team tools):"
                            " give a subagent_type (explore, plan, code-reviewer, general-purpose, or a"
                            " project agent type)")
        return super().run(args, ctx)


def lead_tools(approvals: str, coordinator: bool) -> dict[str, Tool]:
    """The lead's tool set: team tools, AnswerPermission/AnswerPlan with `--approvals lead`,
    the subagent tools, and the file and shell tools unless `--coordinator`."""
    items: list[Tool] = [SpawnTeammate(), LeadSendMessage(), tt.TaskCreate(), tt.TaskListTool(),
                         tt.TaskGet(), tt.TaskUpdate(), TeamStatus(), StopTeammate(), SetMode(),
                         TeamDelete()]
    if approvals == "lead":
        items += [AnswerPermission(), AnswerPlan()]
    items += [CoordinatorAgent() if coordinator else AgentTool(), AgentStatusTool(),
              AgentStopTool()]
    if not coordinator:
        items += [ft.Read(), ft.Glob(), ft.Grep(), ft.Bash(), ft.Write(), ft.Edit()]
    return {tool.name: tool for tool in items}
