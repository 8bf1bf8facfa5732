"""Bash rules (`Bash(cmd)`, `Bash(prefix:*)`) matched against the commands bash would run: a deny
rule denies if any simple command matches and asks if one might; an allow rule allows only what
it can read, every simple command matched and every write inside the cwd."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from msgspec import Struct

from swarm.core.shell import parse as shellparse
from swarm.core.shell.parse import SimpleCommand, Word
from swarm.core.shell.protected import absolute, same_path
from swarm.core.shell.writes import protected_writes, writes_outside

Match = Literal["yes", "maybe", "no"]


class BashRule(Struct, frozen=True):
    words: tuple[str, ...]
    exact: bool  # Bash(cmd): all the words; Bash(cmd:*): these words first
    text: str  # the exact rule's whole command


@lru_cache(maxsize=256)
def bash_rule(spec: str) -> BashRule:
    prefix = spec.endswith(":*")
    text = spec[:-2].strip() if prefix else spec.strip()
    parsed = shellparse.parse(text)
    words: tuple[str, ...] = ()
    # A rule's words, even when as a command they would be opaque (`bash`, `su` alone read
    # their input): what the rule allows is judged on the command it is matched against.
    if len(parsed) == 1 and all(w.literal for w in parsed[0].layers[0]):
        words = tuple(w.text for w in parsed[0].layers[0])
    return BashRule(words, not prefix, text)


def layer_match(rule: BashRule, argv: tuple[Word, ...], deny: bool) -> Match:
    """Do these words match? Deny compares program basenames and calls a word it cannot read a
    "maybe"; allow needs the program as the rule spells it and every word read."""
    if not rule.words or not argv:
        return "no"
    for i, want in enumerate(rule.words):
        if i >= len(argv):
            return "no"
        got = argv[i]
        if not got.literal:
            return "maybe" if deny else "no"
        if i == 0 and deny:
            same = shellparse.basename(got.text) == shellparse.basename(want)
        else:
            same = got.text == want
        if not same:
            return "no"
    extra = argv[len(rule.words):]
    if rule.exact and extra:
        return "maybe" if deny and not any(w.literal for w in extra) else "no"
    return "yes"


def deny_bash(rule: BashRule, commands: tuple[SimpleCommand, ...]) -> Match:
    result: Match = "no"
    for command in commands:
        for layer in command.layers:
            found = layer_match(rule, layer, deny=True)
            if found == "yes":
                return "yes"
            if found == "maybe":
                result = "maybe"
        if command.opaque:
            result = "maybe"
    return result


def allows(rule: BashRule, command: SimpleCommand) -> bool:
    if command.opaque or command.sets_variables:
        return False
    return any(layer_match(rule, layer, deny=False) == "yes"
               for layer in command.layers[: command.allowable])


def bash_names(spec: str, path: Path, cwd: Path) -> bool:
    """Does a Bash rule name this path: one of its words, or a file it writes?"""
    for command in shellparse.parse(bash_rule(spec).text):
        words = [w for layer in command.layers for w in layer] + list(command.writes)
        if any(w.literal and same_path(absolute(w.text, cwd), path) for w in words):
            return True
    return False


def bash_allowed(command: str, rules: list[tuple[str, str]],
                  cwd: Path) -> tuple[list[str], str | None]:
    """(the rules that allow it, or [] with why not) for Bash(..) allow rules: (rule, spec)."""
    commands = shellparse.parse(command)
    opaque = next((c.opaque for c in commands if c.opaque), None)
    if opaque:
        return [], f"it cannot be checked: {opaque}"
    used, why = bash_rules_used(command, commands, rules)
    specs = dict(rules)
    unnamed = [w.text for w, path in protected_writes(commands, cwd)
               if not any(bash_names(specs[r], path, cwd) for r in used)]
    if unnamed:
        return [], f"it writes to a protected path: {unnamed[0]} (only a rule naming it allows that)"
    outside = writes_outside(commands, cwd)
    if outside:
        return [], f"it writes {outside}"
    return used, why


def bash_rules_used(command: str, commands: tuple[SimpleCommand, ...],
                     rules: list[tuple[str, str]]) -> tuple[list[str], str | None]:
    for rule, spec in rules:
        parsed = bash_rule(spec)
        if parsed.exact and parsed.text == command.strip():
            return [rule], None
    used: list[str] = []
    for simple in commands:
        if simple.runs_string and len(simple.layers) <= simple.allowable:
            continue  # bash -c / eval: judged by the commands of its string
        if simple.sets_variables:  # PATH=.. or LD_PRELOAD=.. changes what the words run
            return [], f"it sets variables: {simple.text}"
        found = next((r for r, spec in rules if allows(bash_rule(spec), simple)), None)
        if found is None:
            return [], None
        if found not in used:
            used.append(found)
    return used, None
