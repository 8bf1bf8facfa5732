"""An agent's own persistent memory (`memory: user|project|local` in its definition), after
Claude Code's subagent memory: one `MEMORY.md` per agent type and scope, read into the agent's
prompt at start (its first lines, capped) and written by the agent with Write/Edit.

- user: `$SWARM_HOME/agent-memory/<type>/MEMORY.md` (every project);
- project: `<project root>/.swarm/agent-memory/<type>/MEMORY.md` (meant to be committed);
- local: `<project root>/.swarm/agent-memory-local/<type>/MEMORY.md` (this checkout only).

The project root is the git root (core.workspace_trust.project_root). Like SWARM.md and
CLAUDE.md, a project's memory file is text in the prompt, read whether or not the project is
trusted; the one write it may make without asking is to this very file (core.shell.rules `own`).
"""

from __future__ import annotations

from pathlib import Path

from swarm.core.store import paths
from swarm.core.trust.workspace import project_root

SCOPES = ("user", "project", "local")
MEMORY_FILE = "MEMORY.md"
MEMORY_LINES = 200  # the docs' "first 200 lines" of MEMORY.md
MEMORY_CHARS = 25_000


def check_memory(value: object) -> str | None:
    if value is None:
        return None
    if value not in SCOPES:
        raise ValueError(f"must be one of {', '.join(SCOPES)} (got {value!r})")
    return str(value)


def memory_file(scope: str, agent_type: str, cwd: Path) -> Path:
    """Where an agent of `agent_type` keeps its memory in `scope`."""
    folder = agent_type.replace(":", "-")  # a plugin-namespaced type is still one folder
    if scope == "user":
        return paths.home() / "agent-memory" / folder / MEMORY_FILE
    base = "agent-memory" if scope == "project" else "agent-memory-local"
    return project_root(cwd) / ".swarm" / base / folder / MEMORY_FILE


def memory_part(scope: str, agent_type: str, cwd: Path) -> str:
    """The "Your memory" part of the prompt: where the file is and what it held at start."""
    path = memory_file(scope, agent_type, cwd)
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            read = f.read(MEMORY_CHARS + 1)  # bounded, whatever the file holds
    except OSError:
        read = ""
    lines = read.splitlines(keepends=True)
    text = "".join(lines[:MEMORY_LINES])
    cut = len(lines) > MEMORY_LINES or len(text) > MEMORY_CHARS
    text = text[:MEMORY_CHARS].rstrip()
    if cut:
        text += (f"\n[truncated: only the first {MEMORY_LINES} lines (at most {MEMORY_CHARS:,}"
                 f" characters) are shown; keep MEMORY.md short and move details to other"
                 f" files in {path.parent}]")
    return "\n".join([
        "# Your memory",
        f"Your persistent memory ({scope} scope) is {path}: what earlier runs of `{agent_type}`"
        " agents learnt. It was read when you started; it is not read again. Record what future"
        " runs should know (patterns, decisions, pitfalls) with Write or Edit on that file"
        " (in acceptEdits mode the one protected path you may write without asking).",
        f"## {path}",
        text or "(empty)",
    ])
