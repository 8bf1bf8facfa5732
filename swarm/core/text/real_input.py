"""What whoever answers a permission request is shown: the tool and its real input as swarm
renders it (the whole command; the path and size of a write), never only the requester's own
description. The terminal prompt, the headless progress line, `swarm permissions list`, the
inbox line and the lead model under `--approvals lead` all call `request_line`/`shown_input`.

And the rule an "always" adds (`exact_rule`), built from that real input (or the person's
edited input), never from the requester's strings: it names exactly the call
(`Bash(<the command>)`, `Write(<the absolute path>)` with wildcards escaped), never a bare tool
or `Tool(*)`; a call no exact rule can name (a blank command, an MCP tool) gets none, unless the
person types the rule (`typed_rule`).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from swarm.core.records.protocol import PermissionRequest
from swarm.core.shell.protected import absolute
from swarm.errors import BadInputError

# A human view shows this much of an input; past it, it says how much more there is and where
# to read it whole (an approver must know when something is cut).
SHOWN_LIMIT = 2000
SAYS_LIMIT = 160  # the requester's own words, when they differ from what it would run
NEWLINE = " ↵ "  # a line break in a command, shown (a second line cannot hide)
_GLOB = re.compile(r"([*?\[])")  # fnmatch's specials: each escaped as a one-character class


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


def exact_rule(tool_name: str, args: dict[str, Any], cwd: Path) -> str:
    """The rule naming exactly this call, or BadInputError when none can."""
    if tool_name == "Bash":
        command = args.get("command")
        spec = command.strip() if isinstance(command, str) else ""
        if not spec:
            raise _no_rule(tool_name, "the command is blank")
        if spec.endswith(":*") or spec == "*":  # a rule would read it as a prefix or as all
            raise _no_rule(tool_name, f"a rule would read {spec!r} as a pattern")
    elif tool_name in ("Write", "Edit"):
        raw = args.get("file_path")
        if not isinstance(raw, str) or not raw.strip():
            raise _no_rule(tool_name, "it names no file")
        # The requester's file, absolute (a team rule holds in every member's cwd), with the
        # wildcard characters of its name escaped: `**` is a file called `**`.
        spec = _GLOB.sub(r"[\1]", os.path.normpath(absolute(raw, cwd)))
    else:
        raise _no_rule(tool_name, "the only rule for it is the whole tool")
    from swarm.core.shell.rules import RULE_RE  # the parser, only when a rule is made

    rule = f"{tool_name}({spec})"
    match = RULE_RE.match(rule)
    if match is None or match.groups() != (tool_name, spec):  # it must read back as written
        raise _no_rule(tool_name, "it cannot be written as a rule")
    return rule


def _no_rule(tool_name: str, why: str) -> BadInputError:
    return BadInputError(f"no rule names exactly this {tool_name} call ({why}), so `always` adds"
                         " none: approve it once, or type the rule you mean (`swarm permissions"
                         " approve ID --rule RULE`)")


def typed_rule(rule: str, tool_name: str) -> str:
    """A rule the person typed (`--rule`): any valid rule that covers the requested tool."""
    from swarm.core.shell.rules import RULE_RE, covers, validate_rule

    checked = validate_rule(rule, also=(tool_name,))  # the tool asked about is one there is
    match = RULE_RE.match(checked)
    if match is None or not covers(match.group(1), tool_name):
        raise BadInputError(f"--rule {rule!r} does not cover {tool_name}: name that tool")
    return checked
