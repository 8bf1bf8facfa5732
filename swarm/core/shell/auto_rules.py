"""Rules in auto: allow rules that grant arbitrary execution are set aside (a bare `Bash`,
`Bash(*)`, shells, interpreters, wrappers and package runners: `Bash(python:*)` allows any
program), and ask rules (`--ask 'Bash(git push:*)'`) match as deny rules do: a call that matches
one, or may (an expansion hides a word), goes to a person, in every mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm.core.shell import parse as shellparse
from swarm.core.shell.bash_rules import bash_rule, deny_bash
from swarm.core.shell.forbidden import INTERPRETERS
from swarm.core.shell.rules import covers, rule_matches, split_rule
from swarm.core.shell.words import OTHER_SHELLS, SHELLS
from swarm.core.shell.wrappers import WRAPPERS

# The first word of a Bash rule that allows any program behind it.
ARBITRARY_EXECUTION = frozenset(SHELLS | OTHER_SHELLS | INTERPRETERS | set(WRAPPERS) | {
    "npx", "bunx", "pnpx", "uvx", "ssh", "eval", "exec", "source", ".", "sudo", "doas",
    "tsx", "ts-node", "luajit", "Rscript", "julia", "osascript", "awk", "gawk", "python2"})
# Runners: these two words allow any package script.
_RUNNERS = frozenset({("npm", "run"), ("npm", "exec"), ("yarn", "run"), ("yarn", "exec"),
                      ("yarn", "dlx"), ("pnpm", "run"), ("pnpm", "exec"), ("pnpm", "dlx"),
                      ("bun", "run"), ("bun", "x"), ("uv", "run"), ("poetry", "run"),
                      ("pipx", "run"), ("conda", "run")})


def grants_any_program(rule: str) -> bool:
    split = split_rule(rule)
    if split is None or split[0] != "Bash":
        return False
    if split[1] is None:
        return True
    words = bash_rule(split[1]).words
    if not words:
        return True  # a rule we cannot read as words: set aside rather than trusted
    first = words[0].rsplit("/", 1)[-1]
    return first in ARBITRARY_EXECUTION or tuple(words[:2]) in _RUNNERS


def set_aside(rules: list[str]) -> tuple[list[str], list[str]]:
    """(kept, set aside in auto)."""
    kept = [r for r in rules if not grants_any_program(r)]
    return kept, [r for r in rules if r not in kept]


def ask_rule(tool_name: str, args: dict[str, Any], cwd: Path, rules: list[str]) -> str | None:
    """The ask rule that matches the call, or may; None when none does."""
    commands = shellparse.parse(str(args.get("command", ""))) if tool_name == "Bash" else ()
    for rule in rules:
        split = split_rule(rule)
        if split is None or not covers(split[0], tool_name):
            continue
        if tool_name == "Bash" and split[1] is not None:
            if deny_bash(bash_rule(split[1]), commands) in ("yes", "maybe"):
                return rule
        elif rule_matches(rule, tool_name, args, cwd, deny=True):
            return rule
    return None
