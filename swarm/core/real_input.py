"""What whoever answers a permission request is shown: the tool and its real input as swarm
renders it (the whole command; the path and size of a write), never only the requester's own
description. The terminal prompt, the headless progress line, `swarm permissions list`, the
inbox line and the lead model under `--approvals lead` all call `request_line`/`shown_input`.
"""

from __future__ import annotations

import json
from typing import Any

from swarm.core.protocol import PermissionRequest

# A human view shows this much of an input; past it, it says how much more there is and where
# to read it whole (an approver must know when something is cut).
SHOWN_LIMIT = 2000
SAYS_LIMIT = 160  # the requester's own words, when they differ from what it would run
NEWLINE = " ↵ "  # a line break in a command, shown (a second line cannot hide)


def _size(text: object) -> str:
    n = len(str(text).encode())
    return f"{n} byte" if n == 1 else f"{n} bytes"


def _one_line(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", NEWLINE)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (f"{text[:limit]} ...[{len(text) - limit} more characters: see"
            " `swarm permissions list --json`]")


def shown_input(tool_name: str, args: dict[str, Any], limit: int = SHOWN_LIMIT) -> str:
    """One line saying what the call would really do, from its input alone."""
    path = args.get("file_path")
    if tool_name == "Bash":
        text = f"Bash: {args.get('command', '')}"
    elif tool_name == "Write":
        text = f"Write {path} ({_size(args.get('content', ''))})"
    elif tool_name == "Edit":
        every = ", every occurrence" if args.get("replace_all") else ""
        text = (f"Edit {path} (replace {_size(args.get('old_string', ''))} with"
                f" {_size(args.get('new_string', ''))}{every})")
    elif tool_name == "Read" and set(args) <= {"file_path", "offset", "limit"}:
        text = f"Read {path}"
    else:
        text = f"{tool_name} {json.dumps(args, ensure_ascii=False)}"
    return _clip(_one_line(text), limit)


def request_line(request: PermissionRequest, limit: int = SHOWN_LIMIT) -> str:
    """The real input, then the requester's description marked as its words when it says
    something else (a description that is the start of the truth adds nothing)."""
    real = shown_input(request.tool_name, request.input, limit)
    says = " ".join(request.description.split())
    whole = " ".join(shown_input(request.tool_name, request.input, 1 << 62)
                     .replace(NEWLINE, " ").split())
    if not says or whole.startswith(says):
        return real
    return f'{real} (says: "{_clip(says, SAYS_LIMIT)}")'
