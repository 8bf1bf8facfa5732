"""A session's modes and config options, as the editor shows and sets them: the mode is the
lead's permission mode (the most it grants a teammate; teammates start in it); the config
options are the teammates' model, how many may run at once, and who answers their requests
(`human`: the editor, through `session/request_permission`; `lead`: the lead model)."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from swarm.core.records.names import LEAD_NAME
from swarm.errors import BadInputError
from swarm.lead.lead_tools import lead_tools
from swarm.lead.options import APPROVALS, LEAD_MODES
from swarm.lead.process import Lead
from swarm.lead.prompt import lead_system_prompt

MODE_TEXT = {
    "default": "Ask before edits and commands the rules do not allow",
    "acceptEdits": "Edits in the working directory run; commands still ask",
    "bypassPermissions": "Everything runs but the deny rules (teammates may start in it)",
    "dontAsk": "What would ask is denied instead",
}
TEAMMATE_MODELS = ("shell", "sonnet", "opus", "haiku")
MAX_TEAMMATES = tuple(str(n) for n in range(1, 9))
APPROVAL_TEXT = {"human": "You, in the editor", "lead": "The lead model"}


def modes(lead: Lead) -> SessionModeState:
    return SessionModeState(current_mode_id=lead.mode, available_modes=[
        SessionMode(id=mode, name=mode, description=MODE_TEXT.get(mode)) for mode in LEAD_MODES])


def _select(option_id: str, name: str, current: str, values: tuple[str, ...],
            names: dict[str, str] | None = None) -> SessionConfigOptionSelect:
    shown = values if current in values else (current, *values)
    return SessionConfigOptionSelect(
        type="select", id=option_id, name=name, current_value=current,
        options=[SessionConfigSelectOption(value=v, name=(names or {}).get(v, v)) for v in shown])


def config_options(lead: Lead) -> list[Any]:
    defaults = lead.spawn_defaults
    return [
        _select("teammate_model", "Teammates' model", defaults.model or "inherit",
                TEAMMATE_MODELS),
        _select("max_teammates", "Teammates at once", str(defaults.max_teammates),
                MAX_TEAMMATES),
        _select("approvals", "Who answers teammates' requests", lead.watch.approvals, APPROVALS,
                APPROVAL_TEXT),
    ]


def set_mode(lead: Lead, mode: str) -> None:
    """The lead's permission mode, for its own calls and as the cap of its teammates'."""
    if mode not in LEAD_MODES:
        raise BadInputError(f"unknown mode {mode!r}: one of {', '.join(LEAD_MODES)}")
    lead.mode = lead.state.mode = lead.policy.mode = mode
    lead.spawn_defaults.permission_mode = mode
    lead.team.update_member(LEAD_NAME, permission_mode=mode)
    _tell_the_lead(lead)


def set_option(lead: Lead, option_id: str, value: str | bool) -> None:
    text = str(value)
    defaults = lead.spawn_defaults
    if option_id == "teammate_model":
        if text not in (*TEAMMATE_MODELS, defaults.model):
            raise BadInputError(f"teammate_model: one of {', '.join(TEAMMATE_MODELS)}")
        defaults.model = text
    elif option_id == "max_teammates":
        if text not in MAX_TEAMMATES:
            raise BadInputError("max_teammates: a number from 1 to 8")
        defaults.max_teammates = int(text)
    elif option_id == "approvals":
        if text not in APPROVALS:
            raise BadInputError(f"approvals: one of {', '.join(APPROVALS)}")
        set_approvals(lead, text)
    else:
        raise BadInputError(f"unknown config option {option_id!r}")
    _tell_the_lead(lead)


def set_approvals(lead: Lead, approvals: str) -> None:
    """Who answers: the watch hands requests to the editor or wakes the lead with them, and the
    lead's AnswerPermission/AnswerPlan tools come or go with it."""
    lead.watch.approvals = lead.options.approvals = approvals
    tools = lead.loop.tools
    wanted = lead_tools(approvals, lead.options.coordinator)
    for name in ("AnswerPermission", "AnswerPlan"):
        if name in wanted:
            tools[name] = wanted[name]
        else:
            tools.pop(name, None)


def _tell_the_lead(lead: Lead) -> None:
    """The lead's system prompt names the teammates' model, their number and the approvals."""
    defaults = lead.spawn_defaults
    lead.loop.system = lead_system_prompt(
        lead.team.name, str(lead.cwd), lead.watch.approvals, lead.options.coordinator,
        defaults.max_teammates, defaults.model or "inherit", lead.mode, project=lead.project,
        policy_dir=lead.team.config().policy_dir)
