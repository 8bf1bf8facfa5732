"""An ACP agent's tool call (a `session/request_permission`'s `toolCall`, merged with what the
call's earlier updates said) as swarm's tool calls, for swarm's mode, rules and file scopes to
decide (runtime.clis.permission), and as the pane and the transcript show it.

Read from the call's real input, never from its title (Qwen Code's title is the command plus
the model's own description of it): a command is Bash with `rawInput.command`, where it runs
(`cwd`/`workdir`/`directory`) made part of it; an edit is Write or Edit of the diff's path; a
read or a search is Read/Grep/Glob of each path it names (its input or `locations`); any other
tool is checked by its name with its title. Unknown input is the lead's to decide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm.runtime.clis.gemini_calls import SwarmCall, content_text
from swarm.runtime.clis.permission import run_in

UNKNOWN_COMMAND = "what it runs is not in the request"
UNKNOWN_PATH = "what it reads is not in the request"
_PATH_KEYS = ("file_path", "filePath", "absolute_path", "path", "filepath")
_DIR_KEYS = ("cwd", "workdir", "directory", "dir_path")
_READ_KINDS = {"read": "Read", "search": "Grep"}


def tool_name(call: dict[str, Any]) -> str:
    """The agent's own name of the tool (`_meta.toolName` where it says), else its title."""
    meta = call.get("_meta") or {}
    return str(meta.get("toolName") or call.get("title") or call.get("kind") or "tool")


def is_swarms_own(call: dict[str, Any], prefix: str) -> bool:
    """A call of swarm's own MCP server's tools (by the name the agent gives them)."""
    return tool_name(call).startswith(prefix)


def swarm_calls(call: dict[str, Any], cwd: Path) -> list[SwarmCall]:
    kind = call.get("kind")
    raw = _raw(call)
    title = str(call.get("title") or "")
    if kind == "execute":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            return [SwarmCall("Bash", {"command": title, "description": UNKNOWN_COMMAND},
                              UNKNOWN_COMMAND)]
        directory = next((str(raw[k]) for k in _DIR_KEYS if isinstance(raw.get(k), str)), None)
        return [SwarmCall("Bash", {"command": run_in(command, directory, cwd)})]
    diffs = [c for c in call.get("content") or [] if isinstance(c, dict)
             and c.get("type") == "diff"]
    if kind in ("edit", "delete", "move") or diffs:
        if diffs:
            return [_write(d) for d in diffs]
        path = _path(raw)
        if path is not None:
            if "old_string" in raw:
                return [SwarmCall("Edit", {"file_path": path,
                                           "old_string": str(raw.get("old_string") or ""),
                                           "new_string": str(raw.get("new_string") or "")})]
            return [SwarmCall("Write", {"file_path": path,
                                        "content": str(raw.get("content") or "")})]
        return [SwarmCall("Write", {"title": title}, "what it writes is not in the request")]
    if kind in _READ_KINDS:
        places = [p for p in (_path(raw),) if p] or [
            str(p["path"]) for p in call.get("locations") or [] if isinstance(p, dict)
            and p.get("path")]
        tool = _READ_KINDS[str(kind)]
        if not places:
            return [SwarmCall(tool, {"title": title}, UNKNOWN_PATH)]
        key = "file_path" if tool == "Read" else "path"
        return [SwarmCall(tool, {key: str(cwd / place)}) for place in places]
    return [SwarmCall(tool_name(call), {"title": title, **raw})]


def _raw(call: dict[str, Any]) -> dict[str, Any]:
    raw = call.get("rawInput")
    return raw if isinstance(raw, dict) else {}


def _path(raw: dict[str, Any]) -> str | None:
    return next((str(raw[k]) for k in _PATH_KEYS if isinstance(raw.get(k), str) and raw[k]),
                None)


def _write(diff: dict[str, Any]) -> SwarmCall:
    if diff.get("oldText"):
        return SwarmCall("Edit", {"file_path": str(diff.get("path")),
                                  "old_string": str(diff["oldText"]),
                                  "new_string": str(diff.get("newText") or "")})
    return SwarmCall("Write", {"file_path": str(diff.get("path")),
                               "content": str(diff.get("newText") or "")})


def shown_call(update: dict[str, Any], prefix: str) -> tuple[str, dict[str, Any]]:
    """A tool call as the pane and the transcript show it: swarm's tools by swarm's name."""
    name = tool_name(update)
    if name.startswith(prefix):
        return "mcp__swarm__" + name[len(prefix):], dict(update.get("rawInput") or {})
    raw = _raw(update)
    if update.get("kind") == "execute" and isinstance(raw.get("command"), str):
        return "Bash", {"command": raw["command"]}
    return name, {"title": str(update.get("title") or "")}


def result_text(update: dict[str, Any]) -> str:
    return content_text(update.get("content"))
