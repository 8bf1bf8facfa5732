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

from swarm import config_file, settings
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
class EffortOption:
    """How an agent CLI takes swarm's effort (low, medium, high, max): its own word for each
    level, put into `args` at `{level}` on its command line. A CLI without one gets a warning at
    spawn and runs at its own default."""

    levels: Mapping[str, str]
    args: tuple[str, ...]

    def argv(self, effort: str | None) -> list[str]:
        if effort is None or effort not in self.levels:
            return []
        return [a.replace("{level}", self.levels[effort]) for a in self.args]


@dataclass(frozen=True)
class AcpAgent:
    """How swarm drives a kind that speaks the Agent Client Protocol (runtime.clis.acp_driver):
    data only, the same driver for every one."""

    id: str  # as the ACP registry spells it: `--agent acp:ID`
    args: tuple[str, ...] = ()  # after the executable
    # Run `node NODE_ARGS... <its package>/ENTRY` in place of its launcher (which starts more
    # node processes only to relaunch itself): (node flags..., entry file).
    node_entry: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    secret_env: tuple[str, ...] = ()  # variables given a random value at each start
    # "module:function(setup, own_mode) -> {variable: path}": its private settings, written
    # 0600 for this start (never the user's own files), named to it by those variables.
    settings: str | None = None
    # Its modes are a session config option of this id (`session/set_config_option`); None:
    # ACP's session modes (`session/set_mode`).
    mode_option: str | None = None
    tested: bool = False  # driven end to end by swarm's tests against the real agent
    # Its command is the member's own (`--agent acp -- CMD ARGS`): an agent swarm knows nothing
    # about, so it runs only in a checkout trusted explicitly.
    anonymous: bool = False
    # It gets the spawner's environment minus every secret swarm knows (an agent whose
    # variables swarm's table does not list: `--agent acp`, `[acp.ID]` tables).
    whole_env: bool = False
    # Files it loads into its own environment (its shell's too) from its cwd or any folder
    # above it below HOME, first found (Qwen Code's `.env`): swarm's trust records no digest
    # of them, so one there refuses the spawn unless the checkout is trusted for this run.
    env_files: tuple[str, ...] = ()


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
    # How its CLI takes an effort (None: it takes none swarm can pass; swarm's own loop maps
    # it per provider in runtime.models.effort).
    effort: EffortOption | None = None

    def effort_argv(self, effort: str | None) -> list[str]:
        """Its command line's words for `effort` (none without an EffortOption)."""
        return self.effort.argv(effort) if self.effort is not None else []

    acp: AcpAgent | None = None  # it speaks ACP: how swarm launches and drives it
    tools_hint: str = ""  # how its model reaches swarm's tools, for its prompt

    @property
    def is_cli(self) -> bool:
        return self.driver is not None

    @property
    def needs_command(self) -> bool:
        """Its command is the member's own (`--agent acp -- CMD ARGS`): a person names it, so
        the lead's SpawnTeammate, which has no command, cannot."""
        return self.acp is not None and self.acp.anonymous

    @property
    def plans_to_the_lead(self) -> bool:
        """Its plan mode ends in a plan swarm puts to the lead (so plan mode is allowed)."""
        return "plan" in self.modes

    def own_mode(self, mode: str) -> str:
        """Its own mode for swarm's `mode` (one it supports; spawn refused the others)."""
        return self.modes.get(mode, mode)

    def install_hint(self) -> str:
        return f"npm install -g {self.npm_package}" if self.npm_package else "see its docs"

    @property
    def anonymous(self) -> bool:
        return self.acp is not None and self.acp.anonymous

    def executable_path(self, command: list[str] | None = None) -> Path:
        """Its executable on PATH (an anonymous ACP agent's: the member's command's), or one
        clear line saying it is missing."""
        if self.anonymous:
            if not command:
                raise BadInputError(f"--agent {self.name} needs the agent's command after `--`"
                                    f" (swarm spawn NAME --agent {self.name} -- CMD ARGS...)")
            found = shutil.which(command[0])
            if found is None:
                raise BadInputError(f"--agent {self.name}: `{command[0]}` is not on PATH")
            return Path(found)
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
ANY_ACP = "acp"  # `--agent acp -- CMD`; `[acp.ID]` tables of config.toml: `--agent acp:ID`
config_file.OWNED_TABLES.add(ANY_ACP)

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
        modes=_modes(plan="plan", default="default", acceptEdits="acceptEdits", auto="auto",
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
        # otherwise it asks and swarm answers with the member's mode, rules and scopes. Its
        # own auto mode stays off: in swarm's auto it asks about every call and swarm decides.
        modes=_modes(plan="plan", default="default", acceptEdits="default", auto="default",
                     bypassPermissions="default"),
        mcp_snippet="swarm.ops.clients:claude_code_snippet",
        # `--effort low|medium|high|xhigh|max` (its thinking and effort for the session).
        effort=EffortOption(_modes(low="low", medium="medium", high="high", max="max"),
                            ("--effort", "{level}")),
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
        modes=_modes(default="untrusted", acceptEdits="untrusted", auto="untrusted",
                     bypassPermissions="untrusted"),
        mcp_snippet="swarm.ops.clients:codex_snippet",
        # Its config's model_reasoning_effort (minimal|low|medium|high|xhigh), as an override.
        effort=EffortOption(_modes(low="low", medium="medium", high="high", max="xhigh"),
                            ("-c", "model_reasoning_effort={level}")),
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
        # mode. Its own plan mode has no plan to put to the lead, so plan is refused; auto
        # too: it reads files by its own defaults unasked, so the forbidden reads (credential
        # stores) could not hold.
        modes=_modes(default="default", acceptEdits="default", bypassPermissions="default"),
        price_provider="gemini",
        mcp_snippet="swarm.ops.clients:gemini_snippet",
        # Its thinking budget lives in its settings' model configs only (modelConfigs
        # customOverrides), with no switch or variable for one session; a system-defaults file
        # (GEMINI_CLI_SYSTEM_DEFAULTS_PATH) is skipped under any world-writable directory such
        # as /tmp: no EffortOption (a warning at spawn).
    ),
    # Agents that speak the Agent Client Protocol, driven by one driver (runtime.clis.acp_driver).
    # Neither Qwen Code nor OpenCode can keep the session's MCP servers while dropping a
    # checkout's configuration (its plugins run even with OPENCODE_DISABLE_PROJECT_CONFIG), so
    # they run only in a trusted checkout (or one with none of it): refused otherwise.
    TeammateKind(
        name="acp:qwen-code", title="Qwen Code", aliases=("qwen-code",),
        executable="qwen", npm_package="@qwen-code/qwen-code", tested_version="0.24.4",
        driver="swarm.runtime.clis.acp_driver:AcpDriver",
        env_prefixes=("OPENAI_", "QWEN_"),
        credentials=("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
        project_config=(
            ConfigPath("qwen_settings", ".qwen/settings.json"),
            ConfigPath("qwen_env", ".qwen/.env", "dotenv"),
            ConfigPath("qwen_commands", ".qwen/commands", "text", "**/*"),
            ConfigPath("qwen_agents", ".qwen/agents", "markdown", "*.md"),
            ConfigPath("qwen_skills", ".qwen/skills", "text", "*/SKILL.md"),
            ConfigPath("qwen_extensions", ".qwen/extensions", "text", "**/*"),
            ConfigPath("qwen_md", "QWEN.md", "text", runs_code=False), AGENTS_MD),
        protected=(".qwen/", "QWEN.md", "AGENTS.md"),
        user_home=UserHome(".qwen", None, ("oauth_creds.json",)),
        sign_in_hint="set OPENAI_API_KEY (and OPENAI_BASE_URL, OPENAI_MODEL) or run `qwen` and /auth",
        model_api=ModelApi(keys=("OPENAI_API_KEY",), base_url_var="OPENAI_BASE_URL",
                           default_base_url="https://api.openai.com/v1"),
        # Its `default` asks about every command and edit (reads too: its private settings);
        # its `plan` has no plan to put to the lead, and `auto`/`yolo` ask nothing.
        modes=_modes(default="default", acceptEdits="default", bypassPermissions="default"),
        tools_hint="They are deferred: find each with tool_search (query"
                   " `select:mcp__swarm__NAME`), then call it with tool_call.",
        acp=AcpAgent(
            id="qwen-code", args=("--acp", "--approval-mode", "{mode}"),
            node_entry=("--expose-gc", "cli.js"),
            # One node process, not three; the session's MCP servers connected before
            # `session/new` answers (else its first turn runs without swarm's tools).
            env=MappingProxyType({"QWEN_CODE_NO_RELAUNCH": "true",
                                  "QWEN_CODE_LEGACY_MCP_BLOCKING": "1"}),
            settings="swarm.runtime.clis.acp_settings:qwen_settings", tested=True,
            env_files=(".qwen/.env", ".env")),
    ),
    TeammateKind(
        name="acp:opencode", title="OpenCode", aliases=("opencode",),
        executable="opencode", npm_package="opencode-ai", tested_version="1.18.33",
        driver="swarm.runtime.clis.acp_driver:AcpDriver", tool_prefix="swarm_",
        env_prefixes=("OPENCODE_", "OPENAI_"),
        credentials=("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENCODE_API_KEY"),
        project_config=(
            ConfigPath("opencode_json", "opencode.json"),
            ConfigPath("opencode_jsonc", "opencode.jsonc", "text"),
            # Plugins here run their top-level code at start, whatever its switches say.
            ConfigPath("opencode_folder", ".opencode", "text", "**/*"), AGENTS_MD),
        protected=(".opencode/", "opencode.json", "opencode.jsonc", "AGENTS.md"),
        user_home=UserHome(".local/share/opencode", None, ("auth.json",)),
        sign_in_hint="set OPENAI_API_KEY and OPENAI_BASE_URL, or run `opencode auth login`",
        model_api=ModelApi(keys=("OPENAI_API_KEY",), base_url_var="OPENAI_BASE_URL",
                           default_base_url="https://api.openai.com/v1"),
        # It asks nothing by default: its private config makes it ask about every tool but
        # swarm's; `plan` has no plan for the lead.
        modes=_modes(default="build", acceptEdits="build", bypassPermissions="build"),
        acp=AcpAgent(
            id="opencode", args=("acp",), mode_option="mode",
            env=MappingProxyType({"OPENCODE_DISABLE_AUTOUPDATE": "true",
                                  "OPENCODE_DISABLE_MODELS_FETCH": "true",
                                  "OPENCODE_DISABLE_CLAUDE_CODE": "1",
                                  "OPENCODE_DISABLE_SHARE": "true"}),
            # Its HTTP API on loopback (the whole config, keys included) needs this password.
            secret_env=("OPENCODE_SERVER_PASSWORD",),
            settings="swarm.runtime.clis.acp_settings:opencode_settings", tested=True),
    ),
    # Any other ACP agent: `--agent acp -- CMD ARGS` (its modes as ACP's session modes).
    TeammateKind(
        name=ANY_ACP, title="ACP agent", driver="swarm.runtime.clis.acp_driver:AcpDriver",
        sign_in_hint="see the agent's docs for its login",
        modes=_modes(default="default", acceptEdits="default", bypassPermissions="default"),
        acp=AcpAgent(id="", anonymous=True, whole_env=True),
    ),
    # From their documentation, not driven by swarm's tests here (not on npm, or a login with
    # no local stand-in): launch, files and credentials as documented.
    TeammateKind(
        name="acp:goose", title="Goose", aliases=("goose",), executable="goose",
        driver="swarm.runtime.clis.acp_driver:AcpDriver", env_prefixes=("GOOSE_",),
        credentials=("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY",
                     "OPENROUTER_API_KEY", "DATABRICKS_TOKEN"),
        project_config=(ConfigPath("goosehints", ".goosehints", "text", runs_code=False),
                        AGENTS_MD),
        protected=(".goosehints", "AGENTS.md"),
        user_home=UserHome(".config/goose"),
        sign_in_hint="run `goose configure`",
        modes=_modes(default="approve", acceptEdits="approve", bypassPermissions="approve"),
        acp=AcpAgent(id="goose", args=("acp",), env=MappingProxyType({"GOOSE_MODE": "{mode}"})),
    ),
    TeammateKind(
        name="acp:kimi", title="Kimi Code CLI", aliases=("kimi",), executable="kimi",
        driver="swarm.runtime.clis.acp_driver:AcpDriver", env_prefixes=("KIMI_",),
        project_config=(ConfigPath("kimi_folder", ".kimi", "text", "**/*"), AGENTS_MD),
        protected=(".kimi/", "AGENTS.md"),
        user_home=UserHome(".kimi", "KIMI_CODE_HOME", ("config.toml",)),
        sign_in_hint="run `kimi` and /login",
        modes=_modes(default="default", acceptEdits="default", bypassPermissions="default"),
        acp=AcpAgent(id="kimi", args=("acp",)),
    ),
    TeammateKind(
        name="acp:github-copilot-cli", title="GitHub Copilot CLI", aliases=("copilot",),
        executable="copilot", npm_package="@github/copilot",
        driver="swarm.runtime.clis.acp_driver:AcpDriver", env_prefixes=("COPILOT_",),
        credentials=("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
        project_config=(
            ConfigPath("copilot_hooks", ".github/hooks", "json", "*.json"),
            ConfigPath("copilot_agents", ".github/agents", "markdown", "*.md"),
            ConfigPath("copilot_md", ".github/copilot-instructions.md", "text",
                       runs_code=False),
            ConfigPath("copilot_instructions", ".github/instructions", "text",
                       "**/*.instructions.md", runs_code=False), AGENTS_MD),
        protected=(".github/hooks/", ".github/agents/", ".github/instructions/",
                   ".github/copilot-instructions.md", "AGENTS.md"),
        user_home=UserHome(".copilot", "COPILOT_HOME", ("config.json",)),
        sign_in_hint="run `copilot login`",
        modes=_modes(default="default", acceptEdits="default", bypassPermissions="default"),
        acp=AcpAgent(id="github-copilot-cli", args=("--acp", "--stdio")),
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
    return (*KNOWN_KINDS, *_registered, *configured())


# (the config read, its kinds, why its bad tables are not kinds)
_configured: list[tuple[object, tuple[TeammateKind, ...], tuple[str, ...]]] = []


def configured() -> tuple[TeammateKind, ...]:
    """The ACP agents of the user's `[acp.ID]` tables in `$SWARM_HOME/config.toml` (user
    configuration, trusted as such: a checkout cannot bring one), each as the table's kinds are."""
    try:
        user = settings.user_config()
    except BadInputError:  # a config.toml that does not parse fails where it is read for use
        return ()
    if _configured and _configured[0][0] is user:
        return _configured[0][1]
    taken = {k.acp.id for k in (*KNOWN_KINDS, *_registered) if k.acp is not None}
    built, errors = [], []
    for name, table in dict(user.tables).get(ANY_ACP, {}).items():
        try:
            if name not in taken:
                built.append(_from_table(user.path, name, table))
        except BadInputError as exc:  # said where a kind is asked for by name (agent_cli)
            errors.append(str(exc))
    _configured[:] = [(user, tuple(built), tuple(errors))]
    _protected.clear()
    return tuple(built)


def _from_table(path: Path, name: str, table: object) -> TeammateKind:
    """An `[acp.ID]` table (as editors spell agent servers: command, args, env; and modes)."""
    where = f"{path}: [{ANY_ACP}.{name}]"
    if not isinstance(table, dict) or not isinstance(table.get("command"), str) \
            or not table["command"].strip():
        raise BadInputError(f'{where} needs command = "EXECUTABLE"')
    unknown = set(table) - {"command", "args", "env", "modes"}
    if unknown:
        raise BadInputError(f"{where}: unknown key {sorted(unknown)[0]} (command, args, env,"
                            " modes)")
    args, env, modes = table.get("args", []), table.get("env", {}), table.get("modes", {})
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise BadInputError(f"{where}: args must be a list of strings")
    for key, pairs in (("env", env), ("modes", modes)):
        if not isinstance(pairs, dict) or not all(isinstance(v, str) for v in pairs.values()):
            raise BadInputError(f"{where}: {key} must be a table of strings")
    mapped = {k: v for k, v in modes.items() if k != "plan"} or {
        "default": "default", "acceptEdits": "default", "bypassPermissions": "default"}
    return TeammateKind(
        name=f"{ANY_ACP}:{name}", title=name, executable=table["command"].strip(),
        driver="swarm.runtime.clis.acp_driver:AcpDriver",
        sign_in_hint=f"see {table['command']}'s docs for its login",
        modes=MappingProxyType(mapped),
        acp=AcpAgent(id=name, args=tuple(args), env=MappingProxyType(dict(env)),
                     whole_env=True))


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
        bad = _configured[0][2] if _configured else ()
        raise BadInputError(f"unknown agent CLI {name!r}: one of {', '.join(agent_names())}"
                            + (f" ({bad[0]})" if bad else ""))
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
