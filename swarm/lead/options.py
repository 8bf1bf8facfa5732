"""`swarm lead`'s options, checked before anything starts, and the models of the lead and of
its teammates."""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from swarm import settings
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.shell.rules import validate_rule
from swarm.core.trust.user_config import lasting_reviewer
from swarm.errors import BadInputError
from swarm.lead.wake_policy import Watch
from swarm.runtime.models import check_model_spec, default_model_spec
from swarm.runtime.permissions.reviewer import check_reviewer

APPROVALS = ("human", "lead")
# A lead in plan mode would have nobody to approve its plan.
LEAD_MODES = tuple(m for m in PERMISSION_MODES if m != "plan")
NO_MODEL = ("the lead needs a model: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (the lead"
            " runs sonnet), pass --model PROVIDER:MODEL (openai:..., ollama:...), or"
            " --model scripted:FILE to replay a scripted lead offline")


class LeadOptions(Struct, dict=True):
    prompt: str | None = None
    team: str | None = None
    model: str | None = None
    teammate_model: str | None = None
    backend: str | None = None
    cwd: str | None = None
    approvals: str = "human"
    coordinator: bool = False
    headless: bool = False
    as_json: bool = False
    timeout: float | None = None
    max_teammates: int = 8
    max_budget_usd: float | None = None
    keep: bool = False
    resume: bool = False
    report: Path | None = None  # --report FILE: the run report, written at the end
    permission_mode: str = "default"  # its own tool use; the most it grants; teammates' default
    allow: tuple[str, ...] = ()  # --allow RULE: the lead's, and its teammates'
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()  # --ask RULE: a person decides, for the lead and its teammates
    reviewer: str | None = None  # --reviewer: auto's, the lead's and its teammates'
    # The wake policy; scripts/bench_lead.py passes its re-created anchor policy (not a CLI flag).
    watch_type: type[Watch] = Watch
    trust_project: bool = False  # --trust-project: the project is trusted for this run only
    effort: str | None = None  # --effort: how hard the lead thinks (else config.toml's effort)


def lead_model_spec(requested: str | None) -> str:
    """--model, else $SWARM_MODEL (unless it is the teammates' `shell`), else sonnet with a key."""
    spec = (requested or "").strip()
    if not spec:
        env = settings.model()
        spec = env if env and env.lower() != "shell" else ("sonnet" if settings.anthropic_credentials() else "")
    if not spec:
        raise BadInputError(NO_MODEL)
    if spec.lower() == "shell":
        raise BadInputError("the offline shell model cannot lead (it only runs `$ ` commands):"
                            " give the lead a real model, or --model scripted:FILE")
    return spec


def lead_model_origin(requested: str | None, spec: str) -> str | None:
    """Where the lead's model came from when no --model named it (for an error about it)."""
    if (requested or "").strip() or settings.model() != spec:
        return None
    return settings.model_origin()


def validate(options: LeadOptions) -> None:
    if options.approvals not in APPROVALS:
        raise BadInputError(f"--approvals must be one of {', '.join(APPROVALS)}")
    if options.permission_mode not in LEAD_MODES:
        raise BadInputError(f"--permission-mode must be one of {', '.join(LEAD_MODES)}")
    if options.max_teammates < 1:
        raise BadInputError("--max-teammates must be at least 1")
    if options.max_budget_usd is not None and options.max_budget_usd <= 0:
        raise BadInputError("--max-budget-usd must be positive")
    if options.timeout is not None and options.timeout <= 0:
        raise BadInputError("--timeout must be positive")
    if options.resume and not options.team:
        raise BadInputError("--resume needs --team T: the team whose lead to continue")
    if options.report is not None and (options.report.is_dir()
                                       or not options.report.parent.is_dir()):
        raise BadInputError(f"--report {options.report}: " + (
            "is a directory: give a file name" if options.report.is_dir()
            else f"no directory {options.report.parent} to write it in"))
    options.allow = tuple(validate_rule(r) for r in options.allow)
    options.deny = tuple(validate_rule(r) for r in options.deny)
    options.ask = tuple(validate_rule(r) for r in options.ask)
    options.reviewer = check_reviewer(options.reviewer or lasting_reviewer())
    if options.teammate_model and options.teammate_model.strip().lower() != "inherit":
        try:
            check_model_spec(options.teammate_model, cwd=options.cwd)
        except BadInputError as exc:
            raise BadInputError(f"--teammate-model: {exc}") from None


def teammate_model_spec(requested: str | None, lead_spec: str) -> str:
    """`--teammate-model` (default `inherit`): the lead's model; for a scripted lead,
    $SWARM_MODEL, else sonnet with credentials, else shell."""
    if requested and requested.strip().lower() != "inherit":
        return requested.strip()
    if lead_spec.lower().startswith("scripted:"):
        return default_model_spec()[0]
    return lead_spec
