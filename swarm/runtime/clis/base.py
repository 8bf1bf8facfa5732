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
from swarm.core.model.state import Usage
from swarm.core.shell.rules import Decision
from swarm.runtime.tools.builtin import kill_tree


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

    def on_text(self, text: str) -> None: ...

    def on_tool_use(self, name: str, args: dict[str, Any]) -> None: ...

    def on_tool_result(self, content: str, is_error: bool) -> None: ...


@dataclass
class DriverSetup:
    """Everything a driver needs to start its CLI for one member."""

    kind: TeammateKind
    executable: Path
    cwd: Path
    mode: str  # swarm's permission mode
    model: str | None
    system_append: str  # swarm's part of the prompt (who it is, the team protocol)
    mcp_server: list[str]  # argv of `swarm mcp serve --team T --as NAME`
    mcp_env: dict[str, str]
    session: str | None  # resume this session (a restart)
    env: dict[str, str]
    log: Callable[[str], None]  # a line for the agent's log
    # swarm's answer to a question the CLI asks (tool name, input, call id, an event set when the
    # turn that asked ends; None: the teammate's own interruptible wait): clis.permission.decide
    decide: Callable[[str, dict[str, Any], str, threading.Event | None], Decision] | None = None


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


def stderr_tail(stderr: IO[bytes] | None) -> str:
    """The end of what the CLI wrote to its stderr (kept in a temporary file): for a failure."""
    if stderr is None:
        return ""
    stderr.seek(0)
    return stderr.read().decode("utf-8", "replace").strip()[-300:] or "no output"
