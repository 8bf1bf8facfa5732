"""The kinds of teammate, one entry each: swarm's own loop and every agent CLI swarm drives.

Each part of swarm that needs a fact about a kind reads it here: `spawn --agent`'s choices,
definitions' `agent:`, the lead's SpawnTeammate, `swarm doctor`, `swarm mcp snippet`, the
environment a teammate gets, its driver, workspace trust's project files and the protected
paths. A new kind of teammate is one entry of `KNOWN_KINDS` (and, for a new protocol, its
driver). No other module spells a kind's name (tests/unit/core/test_kinds.py checks).
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from swarm.errors import BadInputError

Format = Literal["json", "toml", "markdown", "text", "dotenv", "folder"]


@dataclass(frozen=True)
class ConfigPath:
    """A project configuration file (or a folder of them) a kind reads from a checkout.

    `key` names it for swarm's loaders and in the trust record; `path` is relative to the
    project root; `pattern`: a folder, of the files matching it. `runs_code`: it can run
    commands or raise rights (hooks, MCP servers, settings, agents, commands, plugins), so it
    counts for workspace trust; False: instructions, text the model reads (a write to either
    asks: protected paths)."""

    key: str
    path: str
    format: Format = "json"
    pattern: str | None = None
    runs_code: bool = True


@dataclass(frozen=True)
class UserHome:
    """Where a CLI keeps the user's own configuration and login (never project config)."""

    default: str  # under $HOME, e.g. `.codex`
    variable: str | None = None  # the variable that moves it, e.g. CODEX_HOME
    login_files: tuple[str, ...] = ()  # files a login leaves there
    dotenv: bool = False  # it reads credentials from `.env` there too


@dataclass(frozen=True)
class ModelApi:
    """How an agent CLI reaches its model, so swarm can serve that API on a loopback proxy that
    alone holds the credential (runtime.clis.model_proxy): the CLI gets a per-teammate token in
    each credential variable and the proxy's URL in place of its API's."""

    keys: tuple[str, ...] = ()  # variables it sends as a header (a key, a token): proxied
    base_url_var: str | None = None  # the variable it takes its API's base URL from
    default_base_url: str = ""  # where it goes when that variable is not set
    header_vars: tuple[str, ...] = ()  # variables of header lines it adds: the proxy adds them
    # Variables that send it elsewhere (a cloud provider's own signing): no proxy then.
    other_routes: tuple[str, ...] = ()
    # "module:function(environ) -> ConfiguredApi": what the user's own config of the CLI says
    # of its API (Codex's provider: its base URL and the variables it names).
    config: str | None = None


@dataclass(frozen=True)
class ConfiguredApi:
    """What a CLI's own user configuration says of its model API."""

    provider: str | None = None  # its id there (Codex's `model_provider`), None: built in
    base_url: str | None = None
    variables: tuple[str, ...] = ()  # environment variables it names (key, header values)


@dataclass(frozen=True)
class TeammateKind:
    """One kind of teammate. Agent CLIs have an executable and a driver; swarm's own loop has
    neither."""

    name: str  # as `--agent` and a definition's `agent:` spell it
    title: str  # for people
    aliases: tuple[str, ...] = ()  # other spellings accepted (`swarm mcp snippet claude`)
    executable: str | None = None  # looked for on PATH
    npm_package: str | None = None  # how to install it
    tested_version: str | None = None  # the version swarm's tests drive
    driver: str | None = None  # "module:Class" of its CliDriver, imported only when it runs
    tool_prefix: str = "mcp__swarm__"  # how its model sees swarm's MCP tools
    own_tools: tuple[str, ...] = ()  # its own tools a permission rule may name (`WebFetch`)
    env_prefixes: tuple[str, ...] = ()  # variables its process needs, by prefix
    credentials: tuple[str, ...] = ()  # variables that sign it in (any one, non-empty)
    project_config: tuple[ConfigPath, ...] = ()
    # Folders (ending in /) and files of a checkout it reads configuration or instructions
    # from, by name at any depth: a write there asks (core.shell.protected).
    protected: tuple[str, ...] = ()
    user_home: UserHome | None = None
    sign_in_hint: str = ""
    # swarm's permission mode -> its own; a mode missing here is refused at spawn (never run
    # with fewer questions than the mode asks for).
    modes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    model_api: ModelApi | None = None  # how it reaches its model (its credential's proxy)
    price_provider: str | None = None  # prices its usage under this provider's table
    mcp_snippet: str | None = None  # "module:function" printing its `swarm mcp snippet`

    @property
    def is_cli(self) -> bool:
        return self.driver is not None

    @property
    def plans_to_the_lead(self) -> bool:
        """Its plan mode ends in a plan swarm puts to the lead (so plan mode is allowed)."""
        return "plan" in self.modes

    def own_mode(self, mode: str) -> str:
        """Its own mode for swarm's `mode` (one it supports; spawn refused the others)."""
        return self.modes.get(mode, mode)

    def install_hint(self) -> str:
        return f"npm install -g {self.npm_package}" if self.npm_package else "see its docs"

    def executable_path(self) -> Path:
        """Its executable on PATH, or one clear line saying it is missing."""
        found = shutil.which(self.executable) if self.executable else None
        if found is None:
            raise BadInputError(f"--agent {self.name} needs the `{self.executable}` CLI, which is"
                                f" not on PATH (install it: {self.install_hint()})")
        return Path(found)


def _modes(**pairs: str) -> Mapping[str, str]:
    return MappingProxyType(dict(pairs))


# Shared by swarm's own loop and Claude Code (swarm reads Claude Code's files too).
MCP_JSON = ConfigPath("mcp", ".mcp.json")
CLAUDE_SETTINGS = ConfigPath("claude_settings", ".claude/settings.json")
CLAUDE_AGENTS = ConfigPath("claude_agents", ".claude/agents", "markdown", "*.md")
CLAUDE_SKILLS = ConfigPath("claude_skills", ".claude/skills", "text", "*/SKILL.md")
AGENTS_MD = ConfigPath("agents_md", "AGENTS.md", "text", runs_code=False)
CLAUDE_MD = ConfigPath("claude_md", "CLAUDE.md", "text", runs_code=False)

SWARM_KIND = "swarm"  # swarm's own loop: a member with no `agent`

KNOWN_KINDS: tuple[TeammateKind, ...] = (
    TeammateKind(
        name=SWARM_KIND, title="swarm's own loop",
        env_prefixes=("ANTHROPIC_",),
        project_config=(
            ConfigPath("settings", ".swarm/settings.json"),
            CLAUDE_SETTINGS, MCP_JSON,
            ConfigPath("agents", ".swarm/agents", "markdown", "*.md"), CLAUDE_AGENTS,
            ConfigPath("skills", ".swarm/skills", "text", "*/SKILL.md"), CLAUDE_SKILLS,
            # Its project memory, in this order in each directory (runtime.teammate.prompts).
            ConfigPath("swarm_md", "SWARM.md", "text", runs_code=False), AGENTS_MD, CLAUDE_MD),
        protected=(".swarm/", ".claude/", ".mcp.json", "SWARM.md", "AGENTS.md", "CLAUDE.md"),
        modes=_modes(plan="plan", default="default", acceptEdits="acceptEdits",
                     bypassPermissions="bypassPermissions"),
    ),
    TeammateKind(
        name="claude-code", title="Claude Code", aliases=("claude",),
        executable="claude", npm_package="@anthropic-ai/claude-code", tested_version="2.1.332",
        driver="swarm.runtime.clis.claude_code:ClaudeCode",
        own_tools=("WebFetch", "WebSearch", "NotebookEdit", "NotebookRead", "TodoWrite", "Task",
                   "MultiEdit", "LS", "BashOutput", "KillShell", "SlashCommand", "Skill"),
        env_prefixes=("ANTHROPIC_", "CLAUDE_"),
        credentials=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                     "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"),
        project_config=(
            CLAUDE_SETTINGS, ConfigPath("claude_local_settings", ".claude/settings.local.json"),
            MCP_JSON, CLAUDE_AGENTS, CLAUDE_SKILLS,
            ConfigPath("claude_commands", ".claude/commands", "text", "**/*.md"),
            CLAUDE_MD, ConfigPath("claude_local_md", "CLAUDE.local.md", "text", runs_code=False)),
        protected=(".claude/", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md"),
        user_home=UserHome(".claude", "CLAUDE_CONFIG_DIR", (".credentials.json",)),
        sign_in_hint="set ANTHROPIC_API_KEY or run `claude` and /login",
        model_api=ModelApi(
            keys=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
            base_url_var="ANTHROPIC_BASE_URL", default_base_url="https://api.anthropic.com",
            header_vars=("ANTHROPIC_CUSTOM_HEADERS",),
            other_routes=("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
                          "CLAUDE_CODE_USE_FOUNDRY")),
        # Its own plan mode ends in ExitPlanMode, put to the lead through PermissionPrompt;
        # otherwise it asks and swarm answers with the member's mode, rules and scopes.
        modes=_modes(plan="plan", default="default", acceptEdits="default",
                     bypassPermissions="default"),
        mcp_snippet="swarm.ops.clients:claude_code_snippet",
    ),
    TeammateKind(
        name="codex", title="Codex",
        executable="codex", npm_package="@openai/codex", tested_version="0.171.0",
        driver="swarm.runtime.clis.codex:Codex",
        env_prefixes=("CODEX_",),
        credentials=("OPENAI_API_KEY", "CODEX_API_KEY"),
        # What it loads from a trusted project's `.codex/` (config, hooks, exec policy rules,
        # agents); its skills load even when untrusted (Codex's design): text for trust.
        project_config=(
            ConfigPath("codex_config", ".codex/config.toml", "toml"),
            ConfigPath("codex_hooks", ".codex/hooks.json"),
            ConfigPath("codex_rules", ".codex/rules", "text", "**/*.rules"),
            ConfigPath("codex_agents", ".codex/agents", "toml", "*.toml"),
            ConfigPath("codex_skills", ".codex/skills", "text", "*/SKILL.md", runs_code=False),
            ConfigPath("agent_skills", ".agents/skills", "text", "*/SKILL.md", runs_code=False),
            AGENTS_MD, ConfigPath("agents_override_md", "AGENTS.override.md", "text",
                                  runs_code=False)),
        protected=(".codex/", ".agents/", "AGENTS.md", "AGENTS.override.md"),
        user_home=UserHome(".codex", "CODEX_HOME", ("auth.json",)),
        sign_in_hint="set OPENAI_API_KEY or run `codex login`",
        # Its API and key are its provider's in the user's config.toml (`base_url`, `env_key`);
        # the built-in provider signs in with `codex login` (auth.json), not proxied.
        model_api=ModelApi(config="swarm.runtime.clis.codex_config:configured_api"),
        # Approval policy `untrusted` in every mode: it asks about every command and patch,
        # and swarm answers with the member's mode (runtime.clis.codex).
        modes=_modes(default="untrusted", acceptEdits="untrusted",
                     bypassPermissions="untrusted"),
        mcp_snippet="swarm.ops.clients:codex_snippet",
    ),
    TeammateKind(
        name="gemini", title="Gemini CLI", aliases=("gemini-cli",),
        executable="gemini", npm_package="@google/gemini-cli", tested_version="0.61.0",
        driver="swarm.runtime.clis.gemini:Gemini", tool_prefix="mcp_swarm_",
        env_prefixes=("GEMINI_", "GOOGLE_"),
        credentials=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"),
        project_config=(
            ConfigPath("gemini_settings", ".gemini/settings.json"),
            ConfigPath("gemini_commands", ".gemini/commands", "text", "**/*.toml"),
            ConfigPath("gemini_extensions", ".gemini/extensions", "json",
                       "*/gemini-extension.json"),
            ConfigPath("gemini_env", ".gemini/.env", "dotenv"),
            ConfigPath("gemini_policies", ".gemini/policies", "toml", "*.toml"),
            ConfigPath("gemini_agents", ".gemini/agents", "markdown", "*.md"),
            ConfigPath("gemini_skills", ".gemini/skills", "text", "*/SKILL.md"),
            ConfigPath("gemini_md", "GEMINI.md", "text", runs_code=False)),
        protected=(".gemini/", "GEMINI.md"),
        user_home=UserHome(".gemini", None, ("oauth_creds.json",), dotenv=True),
        sign_in_hint="set GEMINI_API_KEY or run `gemini` to log in",
        model_api=ModelApi(
            keys=("GEMINI_API_KEY", "GOOGLE_API_KEY"), base_url_var="GOOGLE_GEMINI_BASE_URL",
            default_base_url="https://generativelanguage.googleapis.com",
            other_routes=("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA")),
        # It asks about every command and edit in `default`; swarm answers with the member's
        # mode. Its own plan mode has no plan to put to the lead, so plan is refused.
        modes=_modes(default="default", acceptEdits="default", bypassPermissions="default"),
        price_provider="gemini",
        mcp_snippet="swarm.ops.clients:gemini_snippet",
    ),
)

_registered: list[TeammateKind] = []
_protected: list[tuple[frozenset[str], frozenset[str]]] = []  # protected_names(), once


def register(kind: TeammateKind) -> None:
    """Add a kind at run time (a plugin, a test); a name already taken is refused."""
    taken = {n for k in all_kinds() for n in (k.name, *k.aliases)}
    clash = {kind.name, *kind.aliases} & taken
    if clash:
        raise ValueError(f"teammate kind {', '.join(sorted(clash))} is already registered")
    _registered.append(kind)
    _protected.clear()


def all_kinds() -> tuple[TeammateKind, ...]:
    return (*KNOWN_KINDS, *_registered)


def agent_clis() -> tuple[TeammateKind, ...]:
    """The kinds that are another agent CLI (`spawn --agent NAME`)."""
    return tuple(k for k in all_kinds() if k.is_cli)


def agent_names() -> tuple[str, ...]:
    """What `--agent`, `agent:` and SpawnTeammate accept, canonical names first."""
    clis = agent_clis()
    return (*(k.name for k in clis), *(a for k in clis for a in k.aliases))


def find(name: str | None) -> TeammateKind | None:
    """The kind `name` (or an alias) spells; None for no name or an unknown one."""
    if name is None:
        return None
    lowered = name.strip().lower()
    return next((k for k in all_kinds() if lowered == k.name or lowered in k.aliases), None)


def of_member(agent: str | None) -> TeammateKind:
    """The kind of a member whose `agent` field is `agent` (None: swarm's own loop)."""
    found = find(agent) if agent else find(SWARM_KIND)
    if found is None:
        raise BadInputError(f"unknown teammate kind {agent!r}: one of {', '.join(agent_names())}")
    return found


def agent_cli(name: str) -> TeammateKind:
    """The agent CLI `name` spells, or one line listing them."""
    found = find(name)
    if found is None or not found.is_cli:
        raise BadInputError(f"unknown agent CLI {name!r}: one of {', '.join(agent_names())}")
    return found


def canonical(name: str | None) -> str | None:
    """The canonical name of an agent CLI as stored in a member entry (None stays None)."""
    return None if name is None else agent_cli(name).name


def plans_to_the_lead() -> tuple[str, ...]:
    return tuple(k.name for k in agent_clis() if k.plans_to_the_lead)


def plan_refusal(agent: str, hint: str) -> str:
    """Why a teammate that is `agent` is not put in plan mode (spawn, `swarm mode`)."""
    return (f"--agent {agent}: plan mode needs a plan to put to the lead, which only"
            f" {', '.join(plans_to_the_lead())} gives ({hint})")


def mode_refusal(kind: TeammateKind, mode: str, hint: str) -> str | None:
    """One line when `kind` cannot run in swarm's `mode`, else None."""
    if not kind.is_cli or mode in kind.modes:
        return None
    if mode == "plan":
        return plan_refusal(kind.name, hint)
    return f"--agent {kind.name} cannot run in permission mode {mode} ({hint})"


def project_config_paths() -> tuple[ConfigPath, ...]:
    """Every kind's project configuration, each path once (the first kind's entry wins)."""
    seen: dict[str, ConfigPath] = {}
    for kind in all_kinds():
        for place in kind.project_config:
            seen.setdefault(place.path, place)
    return tuple(seen.values())


def protected_names() -> tuple[frozenset[str], frozenset[str]]:
    """(folders, files) of a checkout that some kind reads configuration or instructions from:
    a write there asks (core.shell.protected), by name at any depth."""
    if not _protected:  # asked on every write checked: worked out once
        names = {n.casefold() for k in all_kinds() for n in k.protected}
        _protected.append((frozenset(n.rstrip("/") for n in names if n.endswith("/")),
                           frozenset(n for n in names if not n.endswith("/"))))
    return _protected[0]


def model_api_secrets() -> frozenset[str]:
    """Every kind's credential and header variables (core.trust.secrets: secret by name)."""
    return frozenset(n for k in all_kinds() if k.model_api is not None
                     for n in (*k.model_api.keys, *k.model_api.header_vars))


def user_config_dirs() -> tuple[UserHome, ...]:
    return tuple(k.user_home for k in all_kinds() if k.user_home is not None)


def load(path: str) -> Any:
    """The object a "module:name" entry names, imported now (drivers, snippets)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
