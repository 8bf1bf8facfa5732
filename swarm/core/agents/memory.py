"""An agent's own persistent memory (`memory: user|project|local` in its definition), after
Claude Code's subagent memory: one `MEMORY.md` per agent type and scope, read into the agent's
prompt at start (its first lines, capped) and written by the agent with Write/Edit.

- user: `$SWARM_HOME/agent-memory/<type>/MEMORY.md` (every project);
- project: `<project root>/.swarm/agent-memory/<type>/MEMORY.md` (meant to be committed);
- local: `<project root>/.swarm/agent-memory-local/<type>/MEMORY.md` (this checkout only).

The project and local scopes live where the definition came from: a Claude Code definition
(`.claude/agents`, `~/.claude/agents`, a plugin's) keeps them under `.claude/` as Claude Code
does (`.claude/agent-memory/<type>/`), so both tools share one memory; swarm's own under
`.swarm/`. The project root is the git root (core.trust.workspace.project_root). Like SWARM.md
and CLAUDE.md, a project's memory file is text in the prompt, read whether or not the project
is trusted. The file is the one exception to protected paths, for its own agent only (core.shell.rules
`own`: written without asking in acceptEdits); a definition whose tools lack Write or Edit is
given them for this file alone (`memory_tools`; the permission policy refuses them any other
path).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.store import paths
from swarm.core.trust.workspace import project_root

SCOPES = ("user", "project", "local")
MEMORY_FILE = "MEMORY.md"
MEMORY_LINES = 200  # the docs' "first 200 lines" of MEMORY.md
MEMORY_CHARS = 25_000
MEMORY_TOOLS = ("Write", "Edit")  # what recording needs; added for the memory file alone


def check_memory(value: object) -> str | None:
    if value is None:
        return None
    if value not in SCOPES:
        raise ValueError(f"must be one of {', '.join(SCOPES)} (got {value!r})")
    return str(value)


def memory_file(scope: str, agent_type: str, cwd: Path, claude: bool = False) -> Path:
    """Where an agent of `agent_type` keeps its memory in `scope`; `claude`: a Claude Code
    definition's project and local scopes, under `.claude/`."""
    folder = agent_type.replace(":", "-")  # a plugin-namespaced type is still one folder
    if scope == "user":
        return paths.home() / "agent-memory" / folder / MEMORY_FILE
    base = "agent-memory" if scope == "project" else "agent-memory-local"
    return project_root(cwd) / (".claude" if claude else ".swarm") / base / folder / MEMORY_FILE


def own_memory(definition: AgentDefinition, cwd: Path) -> Path | None:
    """The memory file of an agent of this definition working in `cwd`; None without memory."""
    if not definition.memory:
        return None
    return memory_file(definition.memory, definition.name, cwd, definition.claude_format)


def memory_tools(definition: AgentDefinition, granted: Sequence[str]) -> list[str]:
    """The file tools a definition with memory is given for its memory file alone: Write and
    Edit when its tools lack them (its own stay whole); one its definition disallows is not
    given (an explicit denial wins)."""
    if not definition.memory:
        return []
    return [t for t in MEMORY_TOOLS if t not in granted and t not in definition.disallowed_tools]


def memory_part(definition: AgentDefinition, cwd: Path, only: Sequence[str] = ()) -> str:
    """The "Your memory" part of the prompt: where the file is and what it held at start.
    `only`: the tools it was given for this file alone."""
    path = own_memory(definition, cwd)
    if path is None:
        return ""
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
    given = (f" {' and '.join(only)} {'are' if len(only) > 1 else 'is'} yours for this file"
             " only." if only else "")
    return "\n".join([
        "# Your memory",
        f"Your persistent memory ({definition.memory} scope) is {path}: what earlier runs of"
        f" `{definition.name}` agents learnt. It was read when you started; it is not read"
        " again. Record what future runs should know (patterns, decisions, pitfalls) with Write"
        " or Edit on that file (in acceptEdits mode the one protected path you may write"
        f" without asking).{given}",
        f"## {path}",
        text or "(empty)",
    ])
