"""Start teammates: validate, register the member, queue its first prompt, launch its process
through a pane backend. Also `respawn` (the same identity, resuming its transcript) and `wake`
(respawn a stopped teammate a message was just sent to)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from msgspec import Struct, field
from msgspec.structs import asdict

from swarm import settings
from swarm.backends.base import PaneBackend
from swarm.backends.hidden import swarm_argv
from swarm.backends.resolve import get_backend, resolve
from swarm.backends.ssh import remote_swarm_argv
from swarm.core import kinds
from swarm.core.agents.definitions import get_definition
from swarm.core.records.names import (
    LEAD_NAME,
    validate_agent_name,
    validate_color,
    validate_effort,
)
from swarm.core.records.permissions import ModeCap, mode_allows, validate_mode
from swarm.core.records.team_config import Member
from swarm.core.shell.git_state import take_snapshot
from swarm.core.shell.rules import validate_rule
from swarm.core.store import paths
from swarm.core.team import attention
from swarm.core.team.team import Team
from swarm.core.team.worktree_links import configured
from swarm.core.team.worktrees import (
    WorktreeRecord,
    create,
    finish,
    record_fields,
)
from swarm.core.text.terminal import visible_line
from swarm.core.trust.secrets import redact, without_secrets
from swarm.core.trust.user_config import default_mode, lasting_reviewer, lasting_rules
from swarm.core.trust.workspace import ProjectConfig, TrustDecision, decide
from swarm.errors import BadInputError, NotAllowedError, NotFoundError, SwarmError, from_origin
from swarm.ops.member.health import observe
from swarm.runtime.models import (
    check_model_spec,
    default_effort,
    default_model_spec,
    effort_warning,
)
from swarm.runtime.models.providers import PASS_VARIABLES
from swarm.runtime.permissions.reviewer import check_reviewer
from swarm.runtime.turn.budget import depth_refusal

log = logging.getLogger(__name__)

# Variables a teammate inherits; everything else stays out of panes (tmux keeps its own env).
PASS_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM",
            "TMPDIR", "VIRTUAL_ENV", "PYTHONPATH", "COLORTERM", "SSL_CERT_FILE")


class SpawnResult(Struct, dict=True):
    agent_id: str
    name: str
    team: str
    backend: str
    backend_reason: str
    pane_id: str | None
    pid: int | None
    model: str
    permission_mode: str
    notice: str | None = None
    warnings: list[str] = field(default_factory=list)  # its definition's ignored keys and tools
    # Project configuration ignored (untrusted), and a trust file that could not be used.
    trust_notices: list[str] = field(default_factory=list)
    agent: str | None = None  # `--agent`: the agent CLI it is
    effort: str | None = None  # how hard it thinks (None: its model's default)
    # Its model or agent CLI cannot take that effort: the one line that says so.
    effort_warning: str | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def agent_env(team: str, member: Member) -> dict[str, str]:
    kind = kinds.of_member(member.agent)
    prefixes = ("SWARM_", *kind.env_prefixes)  # its kind's homes, keys
    named = configured_variables(kind)  # what its CLI's own config names (a provider's key)
    env = {k: v for k, v in os.environ.items()
           if k in PASS_ENV or k in PASS_VARIABLES or k in named or k.startswith(prefixes)}
    if kind.acp is not None and kind.acp.whole_env:  # all but the secrets swarm knows
        env.update(without_secrets(os.environ))
    env.update(SWARM_HOME=str(paths.home()), SWARM_TEAM=team, SWARM_AGENT_ID=member.agent_id)
    # Where the person is (this terminal), to ring when the teammate waits for them; a
    # terminal here means nothing on another host.
    for name in (attention.TTY_VAR, attention.TMUX_VAR, attention.ITERM_VAR):
        env.pop(name, None)
    if not member.host:
        env.update(attention.terminal_env())
    if not settings.debug():
        env.pop("SWARM_DEBUG", None)
    return env


def acp_trust_refusal(kind: kinds.TeammateKind, trust: TrustDecision, workdir: Path,
                      granted: bool = False) -> str | None:
    """An ACP agent runs a checkout's own configuration with no switch that keeps swarm's MCP
    server (runtime.clis.acp_driver): in an untrusted checkout that has any, it is refused; an
    agent swarm knows nothing about (`granted`: --trust-project) only where trusted for it."""
    root = visible_line(str(trust.config.root or Path.cwd()))
    if kind.anonymous and not granted and trust.reason != "trusted":
        # swarm cannot know what an agent it knows nothing about reads from a checkout.
        return (f"--agent {kind.name} -- CMD runs an agent swarm knows nothing about: only in a"
                f" checkout trusted for it (--trust-project, or `swarm trust {root}`)")
    loaded = _env_file(kind.acp.env_files, workdir) \
        if kind.acp is not None and not granted and trust.reason != "trusted" else None
    if loaded is not None:
        return (f"--agent {kind.name} would load {visible_line(str(loaded))} into its own"
                f" environment and its commands': trust this checkout for the run"
                f" (--trust-project) or move the file")
    if kind.acp is None or trust.trusted:
        return None
    return (f"--agent {kind.name} would run this checkout's own configuration"
            f" ({', '.join(visible_line(n) for n in trust.config.names()[:5])}), which is"
            f" untrusted: review it with `swarm trust {root}` (or --trust-project for one run)")


def _env_file(names: tuple[str, ...], start: Path) -> Path | None:
    """The first of `names` an agent would load from `start` or a folder above it, below HOME
    (the user's own, at HOME, is theirs)."""
    home = Path.home().resolve()
    for folder in (start.resolve(), *start.resolve().parents):
        if folder == home or not names:
            return None
        found = next((folder / n for n in names if (folder / n).is_file()), None)
        if found is not None:
            return found
    return None


def configured_variables(kind: kinds.TeammateKind) -> tuple[str, ...]:
    """The variables `kind`'s CLI's own user config names (Codex's provider `env_key`): its
    teammate needs them, as `swarm doctor` counts them for its sign-in."""
    api = kind.model_api
    return kinds.load(api.config)(os.environ).variables if api and api.config else ()


class SpawnRequest(Struct, dict=True):
    """What `swarm spawn`, `swarm respawn` and SpawnTeammate (the lead's and the MCP server's)
    ask for. A respawn reads `name`, `model`, `permission_mode` and `cap` only: the rest stays
    as its member entry has it."""

    name: str
    prompt: str | None = None
    agent_type: str = "general-purpose"
    model: str | None = None
    backend: str | None = None
    cwd: str | None = None
    worktree: bool = False
    plan_mode_required: bool = False
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    color: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    max_tokens: int | None = None
    # Its delegation depth from the person: its spawner's plus one (a person's shell: 1).
    depth: int = 1
    mcp: tuple[str, ...] = ()
    # The spawner's own mode when a member spawns (None: a person): the new teammate's mode
    # may not exceed it.
    cap: ModeCap | None = None
    # The mode it starts in when neither the request nor its definition names one (the
    # lead's: teammates inherit the lead's mode).
    inherit_mode: str | None = None
    # Trust the project's configuration for this run (--trust-project): the teammate gets the
    # grant for this digest.
    trust_project: bool = False
    # `--agent claude-code`: the teammate is that CLI (swarm.runtime.clis), not swarm's loop.
    agent: str | None = None
    effort: str | None = None  # low|medium|high|max; None: its definition's, else config.toml's
    agent_command: list[str] | None = None  # `--agent acp -- CMD ARGS`
    # `--ask RULE`: calls a person decides, in every mode; the spawner's are added.
    ask: tuple[str, ...] = ()
    # auto's reviewer (runtime.permissions.reviewer); None: the spawner's (a member's is
    # always its spawner's: a teammate never picks who reviews it).
    reviewer: str | None = None


def _check_cap(team: Team) -> None:
    """SWARM_MAX_TEAMMATES: a shell (or a model's Bash) cannot start teammates without end.
    Counted from what runs now, not under a lock: two spawns at once may both pass."""
    cap = settings.max_teammates()
    running = [s for s in observe(team) if s.name != LEAD_NAME
               and s.state not in ("exited", "dead")]
    if len(running) >= cap:
        raise BadInputError(f"team {team.name!r} already runs {len(running)} teammates, the"
                            f" most SWARM_MAX_TEAMMATES ({cap}) allows: stop one first, or"
                            " raise SWARM_MAX_TEAMMATES")


def spawn(team: Team, request: SpawnRequest,
          pane_backend: PaneBackend | None = None) -> SpawnResult:
    """Register and start a teammate. `pane_backend`: an instance to start it with (default:
    the one `request.backend` names, made for this call)."""
    req = request
    clean = validate_agent_name(req.name)
    color = None if req.color is None else validate_color(req.color)  # before anything is made
    if team.config().member(clean) is not None:
        raise BadInputError(f"{clean!r} is already a member of team {team.name!r}; "
                            f"use `swarm respawn {clean}` to restart it")
    _check_cap(team)
    choice = resolve(req.backend)  # an ssh: spec is checked (and a file store refused) first
    layout_note = _layout_note(choice.backend, choice.host)  # a bad layout fails here too
    remote_cwd = _remote_cwd(req.cwd, req.worktree) if choice.host else None
    workdir = Path(os.getcwd() if choice.host else req.cwd or os.getcwd()).expanduser().resolve()
    if not workdir.is_dir():
        raise BadInputError(f"--cwd {workdir} is not a directory")
    trust = decide(workdir, flag=req.trust_project)
    try:
        definition = get_definition(req.agent_type, workdir, project=trust.project,
                                    policy_dir=team.config().policy_dir)
    except NotFoundError as exc:
        raise NotFoundError(f"{exc}{_ignored_definition(req.agent_type, trust)}") from None
    defaults = definition.defaults()
    if definition.source in ("project", "plugin") and defaults.get("permission_mode") == "auto":
        # auto and its reviewer come from the person (the command line, their own files)
        # only: a checkout's definition may not choose who approves its calls.
        defaults.pop("permission_mode")
    # A plan-mode teammate works in acceptEdits once its plan is approved, unless told otherwise.
    fallback = "acceptEdits" if req.plan_mode_required else (
        req.inherit_mode or default_mode() or "default")
    if req.cap is not None and not mode_allows(req.cap.mode, fallback):
        fallback = req.cap.mode  # a default nobody asked for is lowered; one asked for is refused
    mode = validate_mode(req.permission_mode or defaults.get("permission_mode") or fallback)
    if req.cap is not None:
        req.cap.check(mode)
    if req.plan_mode_required and mode == "bypassPermissions":
        raise BadInputError("bypassPermissions is never granted to a plan-mode-required agent")
    if req.max_turns is not None and req.max_turns < 1:
        raise BadInputError("--max-turns must be at least 1")
    if req.max_budget_usd is not None and req.max_budget_usd <= 0:
        raise BadInputError("--max-budget-usd must be positive")
    if req.max_tokens is not None and req.max_tokens < 1:
        raise BadInputError("--max-tokens must be at least 1")
    refused = depth_refusal(req.depth, f"spawning teammate {clean}")
    if refused:
        raise BadInputError(refused)
    notice = None
    effort = validate_effort(req.effort) or defaults.get("effort") or default_effort()
    spec = req.model or defaults.get("model")
    agent = kinds.canonical(req.agent or defaults.get("agent"))
    kind = kinds.of_member(agent)
    refused = kinds.mode_refusal(kind, "plan" if req.plan_mode_required else mode,
                                 "spawn it in default or acceptEdits; `swarm mode` changes it later")
    if refused:
        raise BadInputError(refused)
    if req.agent_command and not kind.anonymous:
        raise BadInputError("a command after `--` is for `--agent acp` (an ACP agent swarm's"
                            " table does not know)")
    if kind.is_cli:  # the CLI has its own models and credentials
        kind.executable_path(req.agent_command)  # installed, or one line saying so first
        refused = acp_trust_refusal(kind, trust, workdir,
                                    req.trust_project or settings.trust_project())
        if refused:
            raise BadInputError(refused)
    else:
        origin = None if req.model else (f"{definition.path or definition.name}: model" if spec
                                         else settings.model_origin())
        if not spec:
            spec, notice = default_model_spec()
        # Before anything is registered: credentials for its provider, a script that parses.
        with from_origin(origin):
            spec = check_model_spec(spec, cwd=str(workdir))
    cannot = _effort_warning(kind, spec, effort)
    allow_rules = [validate_rule(r) for r in req.allow]
    deny_rules = [validate_rule(r) for r in req.deny]
    reviewer, ask_rules = _review_settings(team, req)
    lasting_rules()  # a bad rule in config.toml fails here, not in the teammate at its start
    mcp_servers = _check_mcp(req.mcp, workdir, trust.project)
    # `worktree: true` (SpawnTeammate) and `isolation: worktree` (the definition) come here too.
    isolated = req.worktree or definition.isolation == "worktree"
    links, link_warnings = configured(trust.project) if isolated else ([], [])
    tree = create(workdir, team.name, clean, links) if isolated and not choice.host else None
    place: dict[str, object] = record_fields(tree) if tree else {"cwd": str(workdir)}
    if choice.host:
        place = {"cwd": remote_cwd, "host": choice.host}
    registered = False
    try:
        member = team.add_member(
            clean, agent_type=definition.name, model=spec, effort=effort, prompt=req.prompt or "",
            color=color or defaults.get("color"), plan_mode_required=req.plan_mode_required,
            permission_mode=mode, backend=choice.backend, allow_rules=allow_rules,
            deny_rules=deny_rules, ask_rules=ask_rules, reviewer=reviewer, max_turns=req.max_turns or defaults.get("max_turns"),
            max_budget_usd=req.max_budget_usd or defaults.get("max_budget_usd"),
            max_tokens=req.max_tokens or defaults.get("max_tokens"), depth=req.depth,
            tmux_socket=settings.tmux_socket(), mcp_servers=mcp_servers, agent=agent,
            agent_command=list(req.agent_command) if req.agent_command else None,
            trusted_config=trust.config.digest() if trust.for_run else None, **place,
        )
        registered = True
        if req.prompt:
            team.send(clean, req.prompt, sender=LEAD_NAME, summary="initial prompt")
        if mode == "auto" and not choice.host:  # what git may run, as the team starts
            take_snapshot(team.name, Path(str(place["cwd"])))
        pane_id, pid = launch(team, member, pane_backend)
    except BaseException:
        if registered:
            team.remove_member(clean)
        _discard_new(tree)
        raise
    return SpawnResult(agent_id=member.agent_id, name=clean, team=team.name,
                       backend=choice.backend, backend_reason=choice.reason, pane_id=pane_id,
                       pid=pid, model=spec or f"{agent}'s default", agent=agent,
                       permission_mode=mode, notice=notice, effort=effort,
                       effort_warning=cannot,
                       warnings=[*definition.warnings, *link_warnings, *layout_note],
                       trust_notices=[n for n in (trust.warning, trust.notice()) if n])


def _effort_warning(kind: kinds.TeammateKind, spec: str | None,
                    effort: str | None) -> str | None:
    """One line when the teammate cannot take its effort: its CLI has no such option, or its
    model no thinking setting (runtime.models.effort)."""
    if effort is None:
        return None
    if kind.is_cli:
        return None if kind.effort is not None else (
            f"effort {effort}: {kind.title} takes no effort setting swarm can pass; it runs"
            " at its own default")
    return effort_warning(spec, effort) if spec else None


def _review_settings(team: Team, req: SpawnRequest) -> tuple[str | None, list[str]]:
    """(reviewer, ask rules) of the new teammate: its spawner's, and a person's choice on top.
    A member spawning (`cap`) cannot pick another reviewer than its own: that would let it
    choose who approves its teammate's calls."""
    spawner = None
    if req.cap is not None:
        spawner = team.config().member(LEAD_NAME if req.cap.who == "the lead" else req.cap.who)
    inherited = spawner.reviewer if spawner is not None else None
    chosen = check_reviewer(req.reviewer)
    if req.cap is not None and chosen is not None and chosen != inherited:
        raise NotAllowedError(f"--reviewer: {req.cap.who} cannot choose a reviewer; its"
                              f" teammates are reviewed by its own ({inherited or 'none'})")
    asks = [*(spawner.ask_rules if spawner is not None else []),
            *(validate_rule(r) for r in req.ask)]
    if req.cap is None and chosen is None:  # a person: their config.toml's reviewer
        chosen = check_reviewer(lasting_reviewer())
    return chosen or inherited, list(dict.fromkeys(asks))


def _layout_note(backend: str, host: str | None) -> list[str]:
    """SWARM_TMUX_LAYOUT=window is tmux's: elsewhere one line says so (and nothing else)."""
    if settings.tmux_layout() != "window" or (backend == "tmux" and not host):
        return []
    where = (f"on {host}" if host else "in iTerm2, which splits its window as always"
             if backend == "iterm2" else "hidden, with no pane")
    return [f"the tmux layout `window` does not apply: this teammate runs {where}"]


def _ignored_definition(agent_type: str, trust: TrustDecision) -> str:
    """An untrusted project's definition of that type explains an unknown type: named, with
    the way to trust it."""
    ignored = [f.path for f in (*trust.config.of("agents"), *trust.config.of("claude_agents"))
               if f.path.stem.lower() == agent_type.lower() and f not in trust.project.files]
    return (f"; {ignored[0]} is ignored: the project is not trusted (`swarm trust` reviews it)"
            if ignored else "")


def _remote_cwd(cwd: str | None, worktree: bool) -> str | None:
    """A teammate on another host works in `--cwd` there (a path on that host; default: its
    login directory). Worktrees are made on this host, so they are not offered there."""
    if worktree:
        raise BadInputError("--worktree is not available with the ssh backend (worktrees are"
                            " made on this host); give the teammate a checkout there with --cwd")
    return cwd or None


def _discard_new(tree: WorktreeRecord | None) -> None:
    """A spawn that failed leaves no worktree or branch behind (nothing was done in it yet)."""
    if tree is not None:
        finish(tree, discard=True)


def _check_mcp(names: tuple[str, ...], workdir: Path, project: ProjectConfig) -> list[str]:
    """`--mcp NAME`: each must be configured (in .mcp.json or $SWARM_HOME/mcp.json) from here."""
    if not names:
        return []
    from swarm.core.trust.mcp_config import load_mcp_config  # pydantic: only with --mcp

    config = load_mcp_config(workdir, project=project)
    unknown = [n for n in names if n not in config.servers]
    if unknown:
        # A server entry that failed to load is the likely explanation: say which and why.
        broken = [str(p) for p in config.problems
                  if (p.field or "").split(".")[1:2] == [unknown[0]]]
        hint = f"; {broken[0]}" if broken else ""
        raise BadInputError(
            f"--mcp: unknown MCP server {unknown[0]!r} (configured: "
            f"{', '.join(config.servers) or 'none'}; see `swarm mcp list`){hint}")
    return list(dict.fromkeys(names))


def launch(team: Team, member: Member, pane_backend: PaneBackend | None = None
           ) -> tuple[str | None, int | None]:
    """Start `swarm agent` for a registered member through its backend; record pane and pid."""
    backend = pane_backend or get_backend(member.backend or "hidden", team=team.name,
                                          socket=member.tmux_socket, host=member.host)
    # On another host, swarm is started as that host has it (SWARM_REMOTE_SWARM).
    argv = [*(remote_swarm_argv() if member.host else swarm_argv()), "agent", "--agent-id",
            member.agent_id]
    try:
        pane_id = backend.create_pane(member.name, member.color)
        pid = backend.run_in_pane(pane_id, argv, agent_env(team.name, member), member.cwd or ".")
    except SwarmError:
        raise
    except Exception as exc:  # a backend failure is an operation failure, with its reason
        raise SwarmError(f"could not start {member.name} with the {backend.type} backend:"
                         f" {redact(str(exc))}") from exc
    # Inside tmux the backend talks to the server in $TMUX: remember it to find the pane again.
    socket = getattr(backend, "socket", None) or member.tmux_socket
    team.update_member(member.name, pane_id=pane_id, pid=pid, tmux_socket=socket)
    log.info("started %s with the %s backend (pane %s, pid %s)", member.agent_id, backend.type,
             pane_id, pid)
    return pane_id, pid
