"""Permission checks before every tool call: the mode, then the rules (deny first).

Rules: `Tool` (every use), `Bash(prefix:*)` (commands starting with prefix), `Bash(cmd)` (that
exact command), `Edit(glob)` / `Write(glob)` / `Read(glob)` (paths, relative to the agent's cwd).
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from swarm.core.names import PERMISSION_MODES, TEAM_TOOLS
from swarm.errors import BadInputError

RULE_RE = re.compile(r"^([A-Za-z]+)(?:\((.+)\))?$")
CHAIN_RE = re.compile(r"\|\||&&|\$\(|[;&|\n()`]")


@dataclass(frozen=True)
class Decision:
    behavior: Literal["allow", "deny", "ask"]
    reason: str
    rule: str | None = None
    updated_input: dict[str, Any] | None = None  # the lead edited the tool input when approving


def validate_mode(mode: str) -> str:
    if mode not in PERMISSION_MODES:
        raise BadInputError(f"invalid permission mode {mode!r}: use one of {', '.join(PERMISSION_MODES)}")
    return mode


def validate_rule(rule: str) -> str:
    if not RULE_RE.match(rule.strip()):
        raise BadInputError(f"invalid rule {rule!r}: use Tool, Tool(prefix:*) or Tool(glob)")
    return rule.strip()


def _inside(path: Path, root: Path) -> bool:
    """Is `path` inside `root`, after resolving `..` and symlinks (also of missing parents)?"""
    try:
        resolved = Path(os.path.realpath(path))
        return resolved == Path(os.path.realpath(root)) or resolved.is_relative_to(
            os.path.realpath(root))
    except (OSError, ValueError):
        return False


def tool_path(args: dict[str, Any], cwd: Path) -> Path | None:
    raw = args.get("file_path") or args.get("path")
    if not raw:
        return None
    path = Path(os.path.expanduser(str(raw)))
    return path if path.is_absolute() else cwd / path


def command_parts(command: str) -> list[str]:
    """The simple commands of a shell line, split at control operators and substitutions."""
    return [part.strip() for part in CHAIN_RE.split(command) if part.strip()]


def rule_matches(rule: str, tool_name: str, args: dict[str, Any], cwd: Path,
                 deny: bool = False) -> bool:
    match = RULE_RE.match(rule.strip())
    if not match or match.group(1) != tool_name:
        return False
    spec = match.group(2)
    if spec is None or spec == "*":
        return True
    if tool_name == "Bash":
        command = str(args.get("command", "")).strip()
        parts = command_parts(command)
        # A deny rule catches any command of a chain (`true && rm x`); an allow prefix must
        # cover every one of them (`git status; rm x` is not `git status`).
        if spec.endswith(":*"):
            prefix = spec[:-2].strip()

            def hit(c: str) -> bool:
                return c == prefix or c.startswith(prefix + " ")

            if deny:
                return any(hit(c) for c in [command, *parts])
            return bool(parts) and all(hit(c) for c in parts)
        return command == spec.strip() or (deny and spec.strip() in parts)
    path = tool_path(args, cwd)
    if path is None:
        return False
    real = Path(os.path.realpath(path))
    candidates = [str(real)]
    if real.is_relative_to(os.path.realpath(cwd)):
        candidates.append(str(real.relative_to(os.path.realpath(cwd))))
    return any(fnmatch.fnmatch(c, spec) for c in candidates)


def suggest_rule(tool_name: str, args: dict[str, Any]) -> str:
    """The rule `--always` adds: the command's first word for Bash, the tool otherwise."""
    if tool_name == "Bash":
        command = str(args.get("command", "")).strip()
        return f"Bash({command})" if command else "Bash"
    return tool_name


def check(
    tool_name: str,
    args: dict[str, Any],
    *,
    mode: str,
    read_only: bool,
    edits_files: bool,
    cwd: Path,
    allow: list[str],
    deny: list[str],
) -> Decision:
    for rule in deny:
        if rule_matches(rule, tool_name, args, cwd, deny=True):
            return Decision("deny", f"denied by rule {rule}", rule)
    if tool_name == "ExitPlanMode":
        if mode == "plan":
            return Decision("allow", "plan mode")
        return Decision("deny", "ExitPlanMode is only for plan mode")
    if read_only or tool_name in TEAM_TOOLS:
        return Decision("allow", "read-only or team tool")
    if mode == "plan":
        return Decision("deny", f"{tool_name} is not allowed in plan mode: explore read-only and "
                        "submit your plan with ExitPlanMode first")
    if mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode")
    for rule in allow:
        if rule_matches(rule, tool_name, args, cwd):
            return Decision("allow", f"allowed by rule {rule}", rule)
    if mode == "acceptEdits" and edits_files:
        path = tool_path(args, cwd)
        if path is not None and _inside(path, cwd):
            return Decision("allow", "acceptEdits: inside the working directory")
        return Decision("ask", "acceptEdits: path is outside the working directory")
    return Decision("ask", f"{tool_name} needs approval in {mode} mode")
