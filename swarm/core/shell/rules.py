"""Permission checks before every tool call: the mode, then the rules (deny first).

Rules: `Tool` (every use), `Bash(prefix:*)` (commands whose words start with prefix's words),
`Bash(cmd)` (that exact command), `Edit(glob)` / `Write(glob)` / `Read(glob)` (paths, relative to
the agent's cwd, `~` is home). `Read` rules cover Read, Grep and Glob; `Edit` rules cover Edit and
Write. Bash rules are matched against the commands bash would run (`shellparse`): a deny rule
denies if any simple command matches it, and asks if one might (an expansion hides a word); an
allow rule allows only what it can read, every simple command matched and every write inside
the cwd. An opaque command (it cannot be read) is never allowed by a rule, and in
bypassPermissions a Bash deny rule that cannot be ruled out denies it. A write to a protected
path (`protected`) asks under any allow rule that does not name it. docs/design/bash-rules.md "Bash rule
semantics" has examples.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any

from swarm.core.records.names import (
    KEY_FILE,
    KEY_NAMES,
    LEAD_TOOLS,
    SUBAGENT_TOOLS,
    TEAM_TOOLS,
    unknown_rule_tool,
)
from swarm.core.records.permissions import Decision
from swarm.core.shell import parse as shellparse
from swarm.core.shell.bash_rules import bash_allowed, bash_rule, deny_bash
from swarm.core.shell.parse import SimpleCommand
from swarm.core.shell.protected import absolute as _absolute
from swarm.core.shell.protected import inside as _inside
from swarm.core.shell.protected import is_protected, own_file, same_path
from swarm.core.shell.writes import HARMLESS_WRITES, command_writes, protected_writes
from swarm.core.store import paths as swarm_paths
from swarm.errors import BadInputError

# A tool name, or an MCP tool's (`mcp__calc__add`), a whole server's (`mcp__calc`) or a pattern
# (`mcp__calc__*`).
RULE_RE = re.compile(r"^([A-Za-z]+|mcp__[A-Za-z0-9_*-]+)(?:\((.+)\))?\Z", re.S)
# The tools a rule named after the first also covers.
COVERS = {"Read": frozenset({"Read", "Grep", "Glob"}), "Edit": frozenset({"Edit", "Write"})}
_GLOB_CHARS = re.compile(r"[*?\[]")

def validate_rule(rule: str, also: tuple[str, ...] = ()) -> str:
    """The rule, stripped, or one line saying what is wrong. `also`: tools known here besides
    rule_tools() (the tool a pending request names)."""
    split = split_rule(rule)
    if split is None:
        raise BadInputError(f"invalid rule {rule!r}: use Tool, Tool(prefix:*) or Tool(glob)")
    tool, spec = split
    unknown = None if tool in also else unknown_rule_tool(tool)  # a misspelt one never matches
    if unknown:
        raise BadInputError(f"invalid rule {rule!r}: {unknown}")
    if tool == "Bash" and spec is not None and spec.endswith(":*") and not bash_rule(spec).words:
        raise BadInputError(f"invalid rule {rule!r}: the prefix must be one command's leading"
                            " words, like Bash(git status:*)")
    return rule.strip()


def split_rule(rule: str) -> tuple[str, str | None] | None:
    """(tool, specifier or None for a bare tool rule); None if malformed."""
    match = RULE_RE.match(rule.strip())
    if not match:
        return None
    spec = match.group(2)
    return match.group(1), None if spec is None or spec.strip() == "*" else spec


def covers(rule_tool: str, tool_name: str) -> bool:
    return (tool_name == rule_tool or tool_name in COVERS.get(rule_tool, ())
            or _names_mcp_tool(rule_tool, tool_name))


def tool_path(args: dict[str, Any], cwd: Path) -> Path | None:
    """The file Read/Write/Edit name: `file_path` only, as the tools read it (runtime/tools)."""
    raw = args.get("file_path")
    return _absolute(raw, cwd) if isinstance(raw, str) and raw.strip() else None


def reads_lead_key(tool_name: str, args: dict[str, Any], cwd: Path) -> str | None:
    """What names the team's lead key (core.team.lead_key: the file, or the Redis key), in a Read
    or a Grep over a directory holding it, or in a Bash word; None when nothing does. A name
    check only: a command that builds the name (a glob, `$x`) or greps all of $SWARM_HOME is
    not seen (the limits in docs/design/trust.md "Control messages")."""
    if tool_name == "Bash":
        command = str(args.get("command", ""))
        words = [command, *(w.text for c in shellparse.parse(command) for layer in c.layers
                            for w in layer)]
        return next((n for n in KEY_NAMES for w in words if n in w.casefold()), None)
    if tool_name not in ("Read", "Grep"):
        return None
    paths = [tool_path(args, cwd)] if tool_name == "Read" else _tool_paths(tool_name, args, cwd)
    for path in paths:
        # Read: the file itself; Grep: a directory holding it (a team's, $SWARM_HOME, above).
        if path is not None and (path.name == KEY_FILE or (tool_name == "Grep" and (
                (path / KEY_FILE).exists() or _inside(swarm_paths.home(), path)))):
            return str(path)
    return None


def _tool_paths(tool_name: str, args: dict[str, Any], cwd: Path) -> list[Path]:
    """The paths a tool reads or writes: Grep and Glob search from their base directory."""
    if tool_name in ("Grep", "Glob"):
        base = _absolute(str(args.get("path") or "."), cwd)
        if tool_name == "Glob":  # the pattern's leading literal directories narrow the base
            for part in Path(os.path.expanduser(str(args.get("pattern", "")))).parts[:-1]:
                if _GLOB_CHARS.search(part):
                    break
                base = base / part
        return [base]
    path = tool_path(args, cwd)
    return [path] if path is not None else []


def _path_matches(spec: str, path: Path, cwd: Path, deny: bool) -> bool:
    """Does a path rule's glob match? Both sides resolved (symlinks, `..`, `~`); a deny rule also
    sees the path as written, so an alias cannot step around it."""
    real_cwd = os.path.realpath(cwd)
    pattern = os.path.expanduser(spec)
    head, glob = _literal_head(pattern)
    absolute = head if os.path.isabs(head) else os.path.join(real_cwd, head)
    patterns = {pattern, os.path.join(os.path.realpath(absolute), glob) if glob else
                os.path.realpath(absolute)}
    written = os.path.normpath(path)
    candidates = {os.path.realpath(path)} | ({written} if deny else set())
    for candidate in list(candidates):
        if Path(candidate).is_relative_to(real_cwd):
            candidates.add(os.path.relpath(candidate, real_cwd))
        candidates.add(candidate + "/")  # a directory searched: `dir/` matches `dir/**`
    return any(fnmatch.fnmatchcase(c, p) for c in candidates for p in patterns)


def _literal_head(pattern: str) -> tuple[str, str]:
    """Split a glob into its leading directories without wildcards and the rest."""
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            return "/".join(parts[:i]) or ("/" if pattern.startswith("/") else "."), \
                "/".join(parts[i:])
    return pattern, ""


def _names_path(spec: str | None, path: Path, cwd: Path) -> bool:
    """An Edit/Write rule names exactly this path (no wildcard)."""
    return spec is not None and not _GLOB_CHARS.search(spec) and same_path(
        _absolute(spec, cwd), path)


def _deny_writes(commands: tuple[SimpleCommand, ...], rules: list[str], cwd: Path) -> str | None:
    """A Bash write to a file an Edit/Write deny rule protects."""
    for rule in rules:
        split = split_rule(rule)
        if split is None or not covers(split[0], "Write"):
            continue
        for command in commands:
            for word in command_writes(command, [cwd]):
                if word.literal and word.text not in HARMLESS_WRITES and (
                        split[1] is None or _path_matches(
                        split[1], _absolute(word.text, cwd), cwd, deny=True)):
                    return rule
    return None


def _names_mcp_tool(rule_tool: str, tool_name: str) -> bool:
    """`mcp__calc` covers every tool of the server, `mcp__calc__*` is a pattern."""
    if not rule_tool.startswith("mcp__"):
        return False
    if "*" in rule_tool:
        return fnmatch.fnmatchcase(tool_name, rule_tool)
    return "__" not in rule_tool[5:] and tool_name.startswith(rule_tool + "__")


def rule_matches(rule: str, tool_name: str, args: dict[str, Any], cwd: Path,
                 deny: bool = False) -> bool:
    """Does this one rule cover the call? (Bash deny: some simple command surely matches; Bash
    allow: the rule alone allows every simple command.)"""
    split = split_rule(rule)
    if split is None or not covers(split[0], tool_name):
        return False
    spec = split[1]
    if spec is None:
        return True
    if tool_name == "Bash":
        command = str(args.get("command", ""))
        if deny:
            return deny_bash(bash_rule(spec), shellparse.parse(command)) == "yes"
        return bool(bash_allowed(command, [(rule, spec)], cwd)[0])
    return any(_path_matches(spec, p, cwd, deny) for p in _tool_paths(tool_name, args, cwd))


def _check_deny(tool_name: str, args: dict[str, Any], cwd: Path,
                deny: list[str]) -> Decision | None:
    """A deny decision, an ask when a Bash deny rule cannot be ruled out, or None."""
    unsure: Decision | None = None
    commands = shellparse.parse(str(args.get("command", ""))) if tool_name == "Bash" else ()
    for rule in deny:
        split = split_rule(rule)
        if split is None or not covers(split[0], tool_name):
            continue
        if tool_name != "Bash" or split[1] is None:
            if rule_matches(rule, tool_name, args, cwd, deny=True):
                return Decision("deny", f"denied by rule {rule}", rule)
            continue
        found = deny_bash(bash_rule(split[1]), commands)
        if found == "yes":
            return Decision("deny", f"denied by rule {rule}", rule)
        if found == "maybe" and unsure is None:
            why = next((c.opaque for c in commands if c.opaque), None) or \
                "a word of it comes from an expansion"
            unsure = Decision("ask", f"it cannot be checked against deny rule {rule}: {why}",
                              rule)
    if tool_name == "Bash":
        protected = _deny_writes(commands, deny, cwd)
        if protected:
            return Decision("deny", f"denied by rule {protected} (the command writes there)",
                            protected)
    return unsure


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
    own: tuple[Path, ...] = (),
) -> Decision:
    """`own`: the agent's own files (its memory file: core.agents.memory) that acceptEdits lets
    it write without asking, though they are protected paths."""
    denied = _check_deny(tool_name, args, cwd, deny)
    if denied is not None and denied.behavior == "deny":
        return denied
    key = reads_lead_key(tool_name, args, cwd) if mode != "bypassPermissions" else None
    if key:
        return Decision("ask", f"it reads the lead's key ({key}): whoever holds it speaks as the"
                        " lead")
    if tool_name == "ExitPlanMode":
        if mode == "plan":
            return Decision("allow", "plan mode")
        return Decision("deny", "ExitPlanMode is only for plan mode")
    if read_only or tool_name in TEAM_TOOLS or tool_name in SUBAGENT_TOOLS or tool_name in LEAD_TOOLS:
        return Decision("allow", "read-only, team, subagent or lead tool")
    if mode == "plan":
        return Decision("deny", f"{tool_name} is not allowed in plan mode: explore read-only and "
                        "submit your plan with ExitPlanMode first")
    if denied is not None:  # a deny rule might apply: ask; bypassPermissions never asks
        return denied if mode != "bypassPermissions" else Decision("deny", denied.reason,
                                                                   denied.rule)
    if mode == "bypassPermissions":
        return Decision("allow", "bypassPermissions mode")
    command = str(args.get("command", "")) if tool_name == "Bash" else ""
    path = tool_path(args, cwd) if edits_files else None
    guarded = path is not None and is_protected(path, cwd)
    why = ""
    bash_rules: list[tuple[str, str]] = []
    for rule in allow:
        split = split_rule(rule)
        if split is None or not covers(split[0], tool_name):
            continue
        if tool_name == "Bash" and split[1] is not None:
            bash_rules.append((rule, split[1]))
        elif rule_matches(rule, tool_name, args, cwd):
            unnamed = protected_writes(shellparse.parse(command), cwd) if command else []
            if unnamed:
                why = f" (it writes to a protected path: {unnamed[0][0].text})"
            elif guarded and path is not None and not _names_path(split[1], path, cwd):
                why = f" ({path} is a protected path: only a rule naming it exactly allows it)"
            else:
                return Decision("allow", f"allowed by rule {rule}", rule)
    if bash_rules:
        used, why_not = bash_allowed(command, bash_rules, cwd)
        if used:
            return Decision("allow", f"allowed by rule{'s' * (len(used) > 1)} {', '.join(used)}",
                            ", ".join(used))
        why = f" ({why_not})" if why_not else why
    elif tool_name == "Bash" and not why:
        opaque = next((c.opaque for c in shellparse.parse(command) if c.opaque), None)
        why = f" (no rule could allow it: {opaque})" if opaque else ""
    if mode == "acceptEdits" and edits_files:
        if path is not None and any(own_file(path, mine) for mine in own):
            return Decision("allow", "acceptEdits: the agent's own memory file")
        if guarded:
            return Decision("ask", f"acceptEdits: {path} is a protected path")
        if path is not None and _inside(path, cwd):
            return Decision("allow", "acceptEdits: inside the working directory")
        return Decision("ask", "acceptEdits: path is outside the working directory")
    return Decision("ask", f"{tool_name} needs approval in {mode} mode{why}")
