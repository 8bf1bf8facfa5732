"""Every environment variable swarm reads, in one place, read at call time (tests change them).

`VARIABLES` is the table docs/guide/variables.md shows (a test keeps the two identical). Numbers
that do not parse are a clear error naming the variable, never a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct

from swarm import config_file
from swarm.errors import BadInputError


class Variable(Struct, frozen=True):
    name: str
    default: str
    meaning: str


VARIABLES: tuple[Variable, ...] = (
    Variable("SWARM_HOME", "~/.swarm", "root of every file swarm writes"),
    Variable("SWARM_STORE", "file", "where teams live: file ($SWARM_HOME) or redis://HOST:PORT/DB"),
    Variable("SWARM_TEAM", "", "default team for commands (`--team` wins)"),
    Variable("SWARM_AGENT_ID", "", "set in a teammate's environment: who `swarm send` speaks as"),
    Variable("SWARM_MODEL", "sonnet with a key, else shell", "default model for new agents"),
    Variable("SWARM_BACKEND", "auto", "default pane backend: auto, tmux, iterm2, hidden or ssh:[USER@]HOST[:PORT]"),
    Variable("SWARM_TMUX_SOCKET", "tmux's default", "tmux `-L` socket for the detached session"),
    Variable("SWARM_TMUX_LAYOUT", "split", "tmux: `split` one window, or `window`: each teammate its own"),
    Variable("SWARM_POLICY_DIR", "", "managed agent definitions (`agents/*.md`) above all others, read when a team starts"),
    # Teammates on other hosts (`--backend ssh:[USER@]HOST[:PORT]`, backends/ssh.py).
    Variable("SWARM_SSH_OPTIONS", "", "extra ssh options (shell words): `-F cfg -i key -p 2222`"),
    Variable("SWARM_REMOTE_SWARM", "swarm", "how an ssh host starts swarm (shell words, e.g. a path)"),
    Variable("SWARM_REMOTE_HOME", "~/.swarm there", "SWARM_HOME of teammates on ssh hosts"),
    Variable("SWARM_DEBUG", "", "1: tracebacks on errors, debug lines in agent.log and stderr"),
    Variable("SWARM_SHUTDOWN_GRACE", "20", "seconds the lead waits for teammates to exit"),
    Variable("SWARM_UNANSWERED_GRACE", "5", "seconds `swarm shutdown` gives a member that cannot answer (its model failing, an earlier request unread) before ending it"),
    Variable("SWARM_ORPHAN_GRACE", "60", "seconds a teammate outlives its crashed lead"),
    Variable("SWARM_TEAM_GONE_GRACE", "60", "seconds a teammate outlives its lost or corrupt team file"),
    Variable("SWARM_MCP_HUB_GRACE", "10", "seconds a team's MCP server on a host outlives its last agent CLI teammate"),
    Variable("SWARM_AUTO_BACKGROUND_S", "120", "seconds before a foreground subagent backgrounds"),
    Variable("SWARM_SUBAGENT_SUMMARY_EVERY", "30", "seconds between a background subagent's progress summaries"),
    Variable("SWARM_SUMMARY_MODEL", "haiku for Anthropic subagents", "the small model of those summaries (`none`: from their tool calls)"),
    Variable("SWARM_MAX_TEAMMATES", "16", "running teammates one team may have (a spawn past it is refused)"),
    Variable("SWARM_MAX_SUBAGENTS", "8", "subagents one agent may run at once"),
    Variable("SWARM_MAX_SUBAGENTS_TOTAL", "32", "subagents one agent may start over its life"),
    Variable("SWARM_MAX_SUBAGENT_DEPTH", "3", "longest delegation chain from the person (lead 1, teammate 2, subagent 3)"),
    Variable("SWARM_DEPTH", "", "set by swarm: the delegation depth of whoever runs the command"),
    Variable("SWARM_LOCK_TIMEOUT", "10", "seconds a send waits for a mailbox lock"),
    Variable("SWARM_PERMISSION_TIMEOUT", "300", "seconds a permission request waits for the lead"),
    Variable("SWARM_PROGRESS_EVERY", "30", "seconds between a headless lead's \"still thinking\" lines"),
    Variable("SWARM_NOTIFY_COMMAND", "", "run when a teammate waits for your answer (request as SWARM_NOTIFY_* and stdin JSON)"),
    Variable("SWARM_HEARTBEAT_INTERVAL", "2", "seconds between a teammate's heartbeats"),
    Variable("SWARM_HEARTBEAT_STALE", "30", "seconds without a heartbeat before a teammate is dead"),
    Variable("SWARM_STORE_EXIT_GRACE", "10", "seconds an exiting teammate retries a Redis store that is down"),
    Variable("SWARM_COMPACT_THRESHOLD", "120000", "estimated tokens before compaction"),
    Variable("SWARM_API_MAX_RETRIES", "4", "retries of a failed model request (429, 5xx)"),
    Variable("SWARM_API_RETRY_BASE", "1", "first retry delay in seconds (doubles each time)"),
    Variable("SWARM_MCP_TIMEOUT", "30", "seconds an MCP server has to start and list its tools"),
    Variable("SWARM_MCP_TOOL_TIMEOUT", "300", "seconds one MCP tool call may take"),
    Variable("SWARM_REVIEW_TIMEOUT", "60", "seconds auto's reviewer has to answer before a person is asked"),
    Variable("SWARM_DOCTOR_TIMEOUT", "10", "seconds `swarm doctor` waits for an agent CLI's `--version` or `initialize`"),
    Variable("SWARM_FORKSERVER", "", "1: hidden teammates forked from one preloaded parent (less memory)"),
    Variable("SWARM_NO_INOTIFY", "", "1: poll files instead of inotify (for odd filesystems)"),
    Variable("SWARM_TRUST_PROJECT", "", "1: trust the project's configuration for this run (CI)"),
    Variable("SWARM_SECRET_VARS", "", "more variables (comma-separated) Bash commands never see"),
    Variable("ANTHROPIC_API_KEY", "", "the Anthropic key; without it agents default to `shell`"),
    Variable("ANTHROPIC_BASE_URL", "api.anthropic.com", "the Messages API endpoint (read by the SDK)"),
    # Model providers (docs/design/providers.md): `[PROVIDER:]MODEL`.
    Variable("ANTHROPIC_AUTH_TOKEN", "", "Anthropic credentials as a bearer token (gateways)"),
    Variable("OPENAI_API_KEY", "", "the key for `openai:` models"),
    Variable("OPENAI_BASE_URL", "api.openai.com/v1", "`openai:` endpoint (vLLM, LiteLLM, OpenRouter...)"),
    Variable("OLLAMA_HOST", "127.0.0.1:11434", "`ollama:` server; swarm calls `$OLLAMA_HOST/v1`"),
    Variable("AWS_REGION", "", "`bedrock:` region (or AWS_DEFAULT_REGION)"),
    Variable("AWS_DEFAULT_REGION", "", "`bedrock:` region when AWS_REGION is unset"),
    Variable("AWS_ACCESS_KEY_ID", "", "`bedrock:` credentials, with AWS_SECRET_ACCESS_KEY"),
    Variable("AWS_SECRET_ACCESS_KEY", "", "`bedrock:` credentials, with AWS_ACCESS_KEY_ID"),
    Variable("AWS_SESSION_TOKEN", "", "`bedrock:` temporary credentials' session token"),
    Variable("AWS_PROFILE", "", "`bedrock:` credentials from this ~/.aws profile"),
    Variable("AWS_BEARER_TOKEN_BEDROCK", "", "`bedrock:` API key (instead of AWS credentials)"),
    Variable("ANTHROPIC_BEDROCK_BASE_URL", "bedrock-runtime.REGION.amazonaws.com", "`bedrock:` endpoint"),
    Variable("CLOUD_ML_REGION", "", "`vertex:` region (`global`, `us-east5`...)"),
    Variable("ANTHROPIC_VERTEX_PROJECT_ID", "", "`vertex:` Google Cloud project"),
    Variable("GOOGLE_APPLICATION_CREDENTIALS", "gcloud's ADC file", "`vertex:` credentials file"),
    Variable("ANTHROPIC_VERTEX_BASE_URL", "REGION-aiplatform.googleapis.com/v1", "`vertex:` endpoint"),
    # Set by the terminal, read to pick a pane backend.
    Variable("TMUX", "", "set inside tmux: teammates split the current window"),
    Variable("TMUX_PANE", "", "the pane swarm was started from (the leader's pane)"),
    Variable("TMUX_TMPDIR", "/tmp", "where tmux keeps its sockets"),
    Variable("TERM_PROGRAM", "", "iTerm.app: teammates open iTerm2 panes"),
    Variable("ITERM_SESSION_ID", "", "set inside iTerm2: the session to split"),
    Variable("COLUMNS", "the terminal's width", "the width tables fit (`--wide`: no limit)"),
    Variable("_SWARM_COMPLETE", "", "set by the `swarm completion` script: print completions"),
)


def raw(name: str) -> str:
    """The variable's value, stripped ('' when unset)."""
    return os.environ.get(name, "").strip()


def number(name: str, default: float, minimum: float = 0.0) -> float:
    value = raw(name)
    if not value:
        return default
    try:
        parsed = float(value)
    except ValueError:
        raise BadInputError(f"{name} must be a number, got {value!r}") from None
    return max(minimum, parsed)


def home() -> Path:
    value = raw("SWARM_HOME")
    return Path(value).expanduser() if value else Path.home() / ".swarm"


def store() -> str:
    """`file` (unset, or `file`), or a `redis://` / `rediss://` URL; anything else is an error."""
    value = raw("SWARM_STORE")
    if not value or value == "file":
        return "file"
    if value.startswith(("redis://", "rediss://", "unix://")):
        return value
    # Never the value itself: it may hold the password (`http://:pw@host`, `redis:/:pw@host`).
    scheme = value.partition(":")[0] if ":" in value else ""
    if scheme in ("redis", "rediss", "unix"):
        got = f"a malformed {scheme}: URL (no `//` after {scheme}:)"
    else:
        got = f"a {scheme!r} URL" if scheme.isalnum() else "something else"
    raise BadInputError("SWARM_STORE must be `file` or a redis://, rediss:// or unix:// URL"
                        f" (redis://[:PASSWORD@]HOST:PORT/DB), got {got}")


def team() -> str | None:
    """None when unset; '' stays '' so an explicitly empty value is reported, not ignored."""
    return os.environ.get("SWARM_TEAM")


def agent_id() -> str | None:
    return os.environ.get("SWARM_AGENT_ID") or None


def user_config() -> config_file.UserConfig:
    """`$SWARM_HOME/config.toml`: the user's lasting defaults (below the environment)."""
    return config_file.load(home())


def model() -> str:
    return raw("SWARM_MODEL") or user_config().model


def effort() -> str | None:
    """config.toml's `effort` (checked where it is used, with the file named), or None."""
    return user_config().effort or None


def backend() -> str:
    return raw("SWARM_BACKEND") or user_config().backend or "auto"


def backend_source() -> str:
    """Where `backend()` came from, for the resolver's reason."""
    return "$SWARM_BACKEND" if raw("SWARM_BACKEND") else f"{config_file.FILE_NAME} (backend)"


def model_origin() -> str | None:
    """Where `model()` came from, for an error about it: the variable, or the file and key."""
    return _origin("SWARM_MODEL", "model", user_config().model)


def backend_origin() -> str | None:
    """Where `backend()` came from, for an error about it (None: swarm's own `auto`)."""
    return _origin("SWARM_BACKEND", "backend", user_config().backend)


def _origin(variable: str, key: str, configured: str) -> str | None:
    if raw(variable):
        return f"${variable}"
    return f"{user_config().path}: {key}" if configured else None


def tmux_socket() -> str | None:
    return raw("SWARM_TMUX_SOCKET") or None


TMUX_LAYOUTS = ("split", "window")


def tmux_layout() -> str:
    """`split`: teammates split one window (the default); `window`: each its own window."""
    value = raw("SWARM_TMUX_LAYOUT") or user_config().tmux_layout or "split"
    if value not in TMUX_LAYOUTS:
        where = "SWARM_TMUX_LAYOUT" if raw("SWARM_TMUX_LAYOUT") else \
            f"{user_config().path}: tmux_layout"
        raise BadInputError(f"{where} must be one of {', '.join(TMUX_LAYOUTS)}, got {value!r}")
    return value


def policy_dir() -> str | None:
    """An organisation's managed agent definitions (`<dir>/agents/*.md`), absolute; None when
    neither SWARM_POLICY_DIR nor config.toml's `policy_dir` names one. Read when a team is
    created, and kept in its document (core.team.team): a teammate never reads it here."""
    value = raw("SWARM_POLICY_DIR") or user_config().policy_dir
    return str(Path(value).expanduser().absolute()) if value else None


def debug() -> bool:
    return raw("SWARM_DEBUG") == "1"


def forkserver() -> bool:
    return raw("SWARM_FORKSERVER") == "1"


def shutdown_grace() -> float:
    return number("SWARM_SHUTDOWN_GRACE", 20.0)


def unanswered_grace() -> float:
    return number("SWARM_UNANSWERED_GRACE", 5.0)


def orphan_grace() -> float:
    return number("SWARM_ORPHAN_GRACE", 60.0)


def mcp_hub_grace() -> float:
    """Seconds a team's MCP server on a host lives on with no live member driver."""
    return number("SWARM_MCP_HUB_GRACE", 10.0)


def team_gone_grace() -> float:
    return number("SWARM_TEAM_GONE_GRACE", 60.0)


def auto_background_s() -> float:
    return number("SWARM_AUTO_BACKGROUND_S", 120.0)


def subagent_summary_every() -> float:
    return number("SWARM_SUBAGENT_SUMMARY_EVERY", 30.0)


def summary_model() -> str:
    """'' (the default: haiku for an Anthropic subagent), `none`, or a model spec."""
    return raw("SWARM_SUMMARY_MODEL").strip()


def max_teammates() -> int:
    return int(number("SWARM_MAX_TEAMMATES", 16, minimum=1))


def max_subagents() -> int:
    return int(number("SWARM_MAX_SUBAGENTS", 8, minimum=1))


def max_subagents_total() -> int:
    return int(number("SWARM_MAX_SUBAGENTS_TOTAL", 32, minimum=1))


def max_subagent_depth() -> int:
    return int(number("SWARM_MAX_SUBAGENT_DEPTH", 3, minimum=1))


def command_depth() -> int:
    """SWARM_DEPTH: the delegation depth of the agent whose command this is (0: unknown)."""
    return int(number("SWARM_DEPTH", 0))


def lock_timeout() -> float:
    return number("SWARM_LOCK_TIMEOUT", 10.0)


def notify_command() -> str:
    """SWARM_NOTIFY_COMMAND: the person's command run when a teammate waits for them (see
    core.team.attention)."""
    return raw("SWARM_NOTIFY_COMMAND")


def permission_timeout() -> float:
    return number("SWARM_PERMISSION_TIMEOUT", 300.0)


def heartbeat_interval() -> float:
    return number("SWARM_HEARTBEAT_INTERVAL", 2.0, minimum=0.05)


def progress_every() -> float:
    """Seconds between a headless lead's "still thinking" lines during one long call."""
    return number("SWARM_PROGRESS_EVERY", 30.0, minimum=0.5)


def heartbeat_stale() -> float:
    return number("SWARM_HEARTBEAT_STALE", 30.0)


def store_exit_grace() -> float:
    return number("SWARM_STORE_EXIT_GRACE", 10.0)


def compact_threshold() -> int:
    return int(number("SWARM_COMPACT_THRESHOLD", 120_000))


def api_max_retries() -> int:
    return int(number("SWARM_API_MAX_RETRIES", 4))


def api_retry_base() -> float:
    return number("SWARM_API_RETRY_BASE", 1.0)


def mcp_timeout() -> float:
    return number("SWARM_MCP_TIMEOUT", 30.0, minimum=0.1)


def review_timeout() -> float:
    return number("SWARM_REVIEW_TIMEOUT", 60.0, minimum=0.1)


def doctor_timeout() -> float:
    return number("SWARM_DOCTOR_TIMEOUT", 10.0, minimum=0.1)


def mcp_tool_timeout() -> float:
    return number("SWARM_MCP_TOOL_TIMEOUT", 300.0, minimum=0.1)


def use_inotify() -> bool:
    return raw("SWARM_NO_INOTIFY") != "1"


def trust_project() -> bool:
    return raw("SWARM_TRUST_PROJECT") == "1"


def secret_vars() -> tuple[str, ...]:
    return tuple(name.strip() for name in raw("SWARM_SECRET_VARS").split(",") if name.strip())


def api_key() -> str:
    return raw("ANTHROPIC_API_KEY")


def anthropic_credentials() -> bool:
    """An Anthropic key or a gateway's bearer token (the SDK sends either)."""
    return bool(raw("ANTHROPIC_API_KEY") or raw("ANTHROPIC_AUTH_TOKEN"))


def anthropic_base_url() -> str:
    return raw("ANTHROPIC_BASE_URL")


def openai_api_key() -> str:
    return raw("OPENAI_API_KEY")


def openai_base_url() -> str:
    return raw("OPENAI_BASE_URL")


def ollama_host() -> str:
    return raw("OLLAMA_HOST")


def aws_region() -> str:
    return raw("AWS_REGION") or raw("AWS_DEFAULT_REGION")


def bedrock_credentials() -> str | None:
    """Which Bedrock credentials are set (a name to show, never a value), or None."""
    if raw("AWS_BEARER_TOKEN_BEDROCK"):
        return "AWS_BEARER_TOKEN_BEDROCK"
    if raw("AWS_ACCESS_KEY_ID") and raw("AWS_SECRET_ACCESS_KEY"):
        return "AWS_ACCESS_KEY_ID"
    if raw("AWS_PROFILE"):
        return "AWS_PROFILE"
    if (Path.home() / ".aws" / "credentials").is_file():
        return "~/.aws/credentials"
    return None


def bedrock_base_url() -> str:
    return raw("ANTHROPIC_BEDROCK_BASE_URL")


def vertex_region() -> str:
    return raw("CLOUD_ML_REGION")


def vertex_project() -> str:
    return raw("ANTHROPIC_VERTEX_PROJECT_ID")


def vertex_credentials() -> str | None:
    """Google application default credentials: the file named, or gcloud's; None if neither."""
    named = raw("GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        return "GOOGLE_APPLICATION_CREDENTIALS"
    if (Path.home() / ".config" / "gcloud" / "application_default_credentials.json").is_file():
        return "gcloud application-default credentials"
    return None


def vertex_base_url() -> str:
    return raw("ANTHROPIC_VERTEX_BASE_URL")


def tmux_env() -> str:
    """$TMUX: '<socket path>,<server pid>,<session>' inside tmux, '' outside."""
    return raw("TMUX")


def tmux_pane() -> str:
    return raw("TMUX_PANE")


def tmux_tmpdir() -> str:
    return raw("TMUX_TMPDIR") or "/tmp"


def iterm_session_id() -> str:
    return raw("ITERM_SESSION_ID")


def in_iterm2() -> bool:
    return raw("TERM_PROGRAM") == "iTerm.app" or "ITERM_SESSION_ID" in os.environ


def completing() -> bool:
    """The shell's completion script is asking for completions (a Tab), not running a command."""
    return bool(raw("_SWARM_COMPLETE"))


# Set by swarm itself for the processes it starts (`--record DIR`, `swarm replay`), passed to
# teammates with the other SWARM_ variables; not user settings, so not in VARIABLES.
def record_dir() -> str:
    """`--record DIR`: where each member's model requests and replies are kept."""
    return raw("SWARM_RECORD")


def replay_dir() -> str:
    """`swarm replay DIR`: the recording whose replies every member gets instead of a model."""
    return raw("SWARM_REPLAY")


def replay_out() -> str:
    """Where a replaying member writes what matched and where it diverged."""
    return raw("SWARM_REPLAY_OUT")
