"""Gemini CLI's tool calls (its ACP `toolCall`s) as swarm reads them: what it asks about, as
swarm's tool and input (runtime.clis.permission decides them), and what the pane and the
transcript show.

Measured with 0.61: a question's `title` is the tool's display title (a command's full text;
a read's description), `locations` the paths it touches, `kind` its sort (`execute`, `read`,
`search`, `edit`, ...); a command's `content` is one line Gemini builds as `[in DIR]` (its
`dir_path`) or `[current working directory CWD]`, then ` (DESCRIPTION)` (the model's words,
line breaks as spaces) and ` [background]`. The directory is read from that line only where it
reads one way: otherwise where the command runs is not known, and the lead is asked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from swarm.runtime.clis.permission import UNKNOWN_DIRECTORY, run_in

SERVER = "swarm"
UNKNOWN_PATH = "what it reads is not known"
# What follows the directory in a command's line: its description, then `[background]`.
_AFTER_DIRECTORY = re.compile(r"(?: \(.*\))?(?: \[background\])?", re.S)
_IN = "[in "
_HERE = "[current working directory "
# Gemini's read and search tools, as swarm's (a `Read` rule covers Read, Grep and Glob).
READS = {"read_file": "Read", "read_many_files": "Read", "list_directory": "Glob",
         "glob": "Glob", "grep_search": "Grep", "search_file_content": "Grep"}


class SwarmCall:
    """One question as swarm's tool call: its name, input, and why the lead must be asked
    whatever the rules say (None: the rules decide)."""

    def __init__(self, tool: str, args: dict[str, Any], must_ask: str | None = None) -> None:
        self.tool = tool
        self.args = args
        self.must_ask = must_ask


def tool_of(call: dict[str, Any]) -> str:
    """Gemini's own tool name: its call ids are `NAME__NAME_TIME_N`."""
    return str(call.get("toolCallId") or "").split("__", 1)[0] or str(call.get("title") or "")


def content_text(content: Any) -> str:
    parts = []
    for item in content or []:
        inner = item.get("content") if isinstance(item, dict) else None
        if isinstance(inner, dict) and inner.get("type") == "text":
            parts.append(str(inner.get("text") or ""))
        elif isinstance(item, dict) and item.get("type") == "diff":
            parts.append(f"{item.get('path')}: written")
    return "\n".join(parts)


def command_directory(line: str) -> tuple[str | None, bool]:
    """(the `dir_path` a command's line names, or None for its cwd; whether it reads one way)."""
    if line.startswith(_HERE) or not line:
        return None, True  # no dir_path: it runs in the session's cwd
    if not line.startswith(_IN):
        return None, False
    found = {line[len(_IN):i] for i, c in enumerate(line) if c == "]"
             and _AFTER_DIRECTORY.fullmatch(line, i + 1)}
    return (found.pop(), True) if len(found) == 1 else (None, False)


def swarm_calls(call: dict[str, Any], cwd: Path) -> list[SwarmCall]:
    """The call Gemini asks about as swarm's tool calls (each must be allowed): a command is
    Bash with its text (`title`) where it runs, an edit is Write or Edit of its path (from the
    diff), a read or a search is Read, Grep or Glob of each path it names; anything else is
    checked by Gemini's tool name with its title."""
    return [SwarmCall(c.tool, c.args, c.must_ask) for c in _calls(call, cwd)]


def _calls(call: dict[str, Any], cwd: Path) -> list[SwarmCall]:
    kind = call.get("kind")
    title = str(call.get("title") or "")
    name = tool_of(call)
    if kind == "execute":
        line = content_text(call.get("content"))
        directory, known = command_directory(line)
        if not known:
            return [SwarmCall("Bash", {"command": title, "description":
                                       f"{UNKNOWN_DIRECTORY}: {line}"}, UNKNOWN_DIRECTORY)]
        return [SwarmCall("Bash", {"command": run_in(title, directory, cwd)})]
    diff = next((c for c in call.get("content") or [] if c.get("type") == "diff"), None)
    if kind in ("edit", "delete", "move") and diff is not None:
        if diff.get("oldText"):
            return [SwarmCall("Edit", {"file_path": str(diff.get("path")),
                                       "old_string": diff["oldText"],
                                       "new_string": str(diff.get("newText") or "")})]
        return [SwarmCall("Write", {"file_path": str(diff.get("path")),
                                    "content": str(diff.get("newText") or "")})]
    if name in READS:
        places = [str(p.get("path")) for p in call.get("locations") or [] if p.get("path")]
        if not places:
            return [SwarmCall(READS[name], {"title": title}, UNKNOWN_PATH)]
        key = "file_path" if READS[name] == "Read" else "path"
        return [SwarmCall(READS[name], {key: place}) for place in places]
    return [SwarmCall(name, {"title": title})]


def shown_call(update: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A tool call as the pane and the transcript show it: swarm's tools by swarm's name."""
    name = tool_of(update)
    served = name.removeprefix(f"mcp_{SERVER}_")
    if served != name:
        return f"mcp__{SERVER}__{served}", {}
    if update.get("kind") == "execute":
        return "Bash", {"command": str(update.get("title") or "")}
    return name, {"title": str(update.get("title") or "")}
