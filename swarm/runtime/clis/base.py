"""What swarm needs of an agent CLI it drives (one `CliDriver` per CLI), what a turn gives back,
and how a driver ends its CLI. Which CLIs there are, and their facts: core.kinds."""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from swarm.core.kinds import TeammateKind
from swarm.core.records.permissions import Decision
from swarm.core.records.state import Usage
from swarm.core.trust.workspace import project_root
from swarm.runtime.clis.team_server import TeamServer
from swarm.runtime.process.kill import kill_tree


@dataclass
class TurnResult:
    """One turn as the CLI reported it (its own JSON): the last text, usage and cost."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    session_id: str | None = None
    failure: str | None = None  # the CLI said the turn failed (or it died), in words
    interrupted: bool = False


class TurnEvents(Protocol):
    """What the teammate is told while a turn runs (the pane and the transcript)."""

    def on_session(self, session_id: str) -> None: ...

    def on_model(self, model: str) -> None: ...  # the model it runs, as the CLI reports it

    def on_text(self, text: str) -> None: ...

    def on_tool_use(self, name: str, args: dict[str, Any]) -> None: ...

    def on_tool_result(self, content: str, is_error: bool) -> None: ...


class TurnText:
    """A turn's text as it streams in: the pieces since the last tool call are shown when a
    call starts or the turn ends; the turn's last text is its answer."""

    def __init__(self, events: TurnEvents) -> None:
        self.events = events
        self.text = ""
        self.last = ""

    def flush(self) -> None:
        if self.text.strip():
            self.last = self.text.strip()
            self.events.on_text(self.last)
        self.text = ""

    def finish(self) -> str:
        self.flush()
        return self.last


class Decide(Protocol):
    """swarm's answer to a question the CLI asks: the tool (swarm's name), its input, the call
    id, an event set when the turn that asked ends (None: the teammate's own interruptible
    wait), and why the lead must be asked whatever the rules say (clis.permission.decide)."""

    def __call__(self, tool: str, args: dict[str, Any], use_id: str,
                 cancelled: threading.Event | None = None,
                 must_ask: str | None = None) -> Decision: ...


@dataclass
class DriverSetup:
    """Everything a driver needs to start its CLI for one member."""

    kind: TeammateKind
    executable: Path
    cwd: Path
    mode: str  # swarm's permission mode
    model: str | None
    effort: str | None  # swarm's level: its kind's EffortOption puts it on the command line
    system_append: str  # swarm's part of the prompt (who it is, the team protocol)
    # argv and environment of `swarm mcp serve --team T --as NAME`: for a CLI that takes no
    # http MCP server (an ACP agent without `mcpCapabilities.http`)
    mcp_server: list[str]
    mcp_env: dict[str, str]
    session: str | None  # resume this session (a restart)
    env: dict[str, str]
    log: Callable[[str], None]  # a line for the agent's log
    decide: Decide | None = None  # swarm's answer to what the CLI asks
    # Is the checkout's own configuration for this CLI trusted now (workspace trust, the same
    # digest `swarm trust` showed)? Asked each time the CLI starts: untrusted, it starts with
    # none of it, by the CLI's own switches.
    trusted: Callable[[], bool] = lambda: False
    # swarm's deny rules for this member (its own and the user's lasting ones), handed to the
    # CLI's own permission settings too: a call the CLI would make unasked is still refused.
    deny: tuple[str, ...] = ()
    # Where its model API is served for it (swarm's proxy, clis.model_proxy), standing for the
    # user's configured `provider` when its own config names the API (Codex); None: the CLI
    # reaches its API itself (its environment says how).
    model_url: str | None = None
    provider: str | None = None
    command_args: tuple[str, ...] = ()  # an anonymous ACP agent's arguments (`-- CMD ARGS`)
    # The team's MCP server on this host and the member's token (clis.team_server), the
    # server started if none runs: asked at each start of the CLI.
    team_server: Callable[[], TeamServer] | None = None


class CliDriver(Protocol):
    """One CLI session: started once, many turns, interrupted, stopped."""

    def start(self) -> None: ...

    def turn(self, text: str, events: TurnEvents) -> TurnResult: ...

    def interrupt(self) -> None: ...

    def set_mode(self, mode: str) -> None: ...

    def stop(self) -> None: ...

    @property
    def pid(self) -> int | None: ...


def close_and_end(proc: subprocess.Popen[bytes], grace: float) -> None:
    """Close the CLI's input (it ends its session and its MCP servers), then make sure: its
    process tree killed if it has not ended within `grace` seconds."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        kill_tree(proc)  # type: ignore[arg-type]
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)


def checkout_instructions(kind: TeammateKind, cwd: Path) -> str:
    """The checkout's instructions for `kind` (its project files that are text, not
    configuration: GEMINI.md, ...), from the project root down to `cwd`, as one text for a CLI
    that reads none of them itself in an untrusted checkout."""
    root = project_root(cwd)
    folders = [d for d in (cwd, *cwd.parents) if d == root or d.is_relative_to(root)][::-1]
    parts = []
    for folder in folders:
        for place in kind.project_config:
            path = folder / place.path
            if place.runs_code or place.pattern or not path.is_file():
                continue
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = path.read_text().strip()
                if text:
                    parts.append(f"Instructions of this checkout ({path}):\n{text}")
    return "\n\n".join(parts)


def stderr_tail(stderr: IO[bytes] | None) -> str:
    """The end of what the CLI wrote to its stderr (kept in a temporary file): for a failure."""
    if stderr is None:
        return ""
    stderr.seek(0)
    return stderr.read().decode("utf-8", "replace").strip()[-300:] or "no output"
