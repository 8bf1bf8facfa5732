"""Rules that would have allowed a call a person approved, narrowest first: the exact call, then
for Bash one prefix rule per simple command (the program, and its subcommand when it has them:
`Bash(pytest:*)`, `Bash(git push:*)`), for Write/Edit the file's folders up to the working
directory (`Edit(src/**)`). Each suggestion is checked to match the call it came from (a rule
that never matches again is no suggestion), and none grants any program (a shell, an
interpreter, a wrapper: auto sets those aside)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from swarm.core.shell import parse as shellparse
from swarm.core.shell.auto_rules import grants_any_program
from swarm.core.shell.bash_rules import bash_allowed
from swarm.core.shell.rules import rule_matches
from swarm.core.text.real_input import exact_rule
from swarm.errors import BadInputError

# Programs whose second word says what they do (a rule names both).
SUBCOMMANDS = frozenset({"git", "npm", "yarn", "pnpm", "bun", "cargo", "go", "docker", "kubectl",
                         "uv", "poetry", "pip", "pip3", "gh", "dotnet", "mvn", "gradle", "helm",
                         "terraform", "swift", "deno", "nix"})


class Suggestion(Struct, frozen=True):
    rules: tuple[str, ...]  # all of them together allow the call
    covers: str  # what else they allow, in words


def _matches(rules: tuple[str, ...], tool: str, args: dict[str, Any], cwd: Path) -> bool:
    if tool == "Bash":
        pairs = [(r, r[5:-1]) for r in rules]
        return bool(bash_allowed(str(args.get("command", "")), pairs, cwd)[0])
    return any(rule_matches(r, tool, args, cwd) for r in rules)


def suggestions(tool: str, args: dict[str, Any], cwd: Path) -> list[Suggestion]:
    found: list[Suggestion] = []
    with contextlib.suppress(BadInputError):
        found.append(Suggestion((exact_rule(tool, args, cwd),), "exactly this call"))
    if tool == "Bash":
        prefixes: list[str] = []
        for command in shellparse.parse(str(args.get("command", ""))):
            words = [w.text for w in command.argv]
            if not words or not all(w.literal for w in command.argv) or command.opaque:
                return _checked(found, tool, args, cwd)
            take = 2 if os.path.basename(words[0]) in SUBCOMMANDS and len(words) > 1 and \
                not words[1].startswith("-") else 1
            prefixes.append(f"Bash({' '.join(words[:take])}:*)")
        rules = tuple(dict.fromkeys(prefixes))
        if rules and not any(grants_any_program(r) for r in rules):
            found.append(Suggestion(rules, "these commands with any arguments"))
    elif tool in ("Write", "Edit") and isinstance(args.get("file_path"), str):
        path = Path(os.path.realpath(cwd / os.path.expanduser(str(args["file_path"]))))
        root = Path(os.path.realpath(cwd))
        if path.is_relative_to(root):
            parts = path.relative_to(root).parts[:-1]
            for depth in range(len(parts), 0, -1):
                folder = "/".join(parts[:depth])
                found.append(Suggestion((f"Edit({folder}/**)",),
                                        f"edits of any file under {folder}/"))
    return _checked(found, tool, args, cwd)


def _checked(found: list[Suggestion], tool: str, args: dict[str, Any], cwd: Path
             ) -> list[Suggestion]:
    """Those that match the call, each saying when auto sets it aside."""
    return [s if not any(grants_any_program(r) for r in s.rules) else
            Suggestion(s.rules, s.covers + " (set aside in auto: it may run any program)")
            for s in found if _matches(s.rules, tool, args, cwd)]
