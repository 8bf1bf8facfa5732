"""Bash rules against bash's own evaluation: every string
bash may evaluate as code is parsed and checked, or makes the command opaque; what opaque means
in each mode. Unit tests of `swarm.core.shell.rules` (table-driven), and one real teammate.
Protected paths: tests/unit/core/shell/test_protected.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from swarm.core.records.permissions import Decision
from swarm.core.shell.parse import parse
from tests.support.bash_cases import CHECKABLE, EVERYTHING, OPAQUE, PARSED, RM
from tests.support.rule_helpers import bash

# -- evaluation contexts: code inside becomes opaque (tests/support/bash_cases.py OPAQUE) ----------


@pytest.mark.parametrize("command", OPAQUE)
def test_code_in_an_evaluated_string_makes_the_command_opaque(command: str, cwd: Path) -> None:
    assert any(c.opaque for c in parse(command)), command
    asked = bash(command, cwd, "default", allow=EVERYTHING, deny=RM)
    assert asked.behavior == "ask", (command, asked.reason)
    assert bash(command, cwd, "acceptEdits", allow=EVERYTHING).behavior == "ask"
    denied = bash(command, cwd, "bypassPermissions", deny=RM)
    assert denied.behavior == "deny", (command, denied.reason)
    assert "Bash(rm:*)" in denied.reason


# -- evaluation contexts whose string is a literal: parsed and denied (bash_cases.py PARSED) --


@pytest.mark.parametrize("command", PARSED)
def test_a_literal_evaluated_string_is_parsed_and_denied(command: str, cwd: Path) -> None:
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        decision = bash(command, cwd, mode, allow=EVERYTHING, deny=RM)
        assert decision == Decision("deny", "denied by rule Bash(rm:*)", "Bash(rm:*)"), \
            (command, mode, decision.reason)


def test_a_literal_string_is_allowed_when_its_commands_are(cwd: Path) -> None:
    allow = ["Bash(echo:*)", "Bash(trap:*)", "Bash(eval:*)", "Bash(rbash:*)"]
    for command in ["trap -- 'echo bye' EXIT", "eval -- 'echo hi'", "rbash -c 'echo hi'",
                    "eval -- echo hi"]:
        assert bash(command, cwd, allow=allow).behavior == "allow", command
    for command in ["trap -- 'rm x' EXIT", "eval -- 'echo hi; rm x'", "rbash -c 'rm x'"]:
        assert bash(command, cwd, allow=allow).behavior == "ask", command


def test_other_shells_strings_are_read_but_never_allowed(cwd: Path) -> None:
    """fish and csh are not bash: their -c string is read for deny rules, and is opaque."""
    for shell in ("fish", "csh", "tcsh"):
        assert bash(f"{shell} -c 'rm victim'", cwd, "bypassPermissions", deny=RM).behavior == \
            "deny"
        assert bash(f"{shell} -c 'echo hi'", cwd, allow=["Bash(echo:*)", f"Bash({shell}:*)"]
                    ).behavior == "ask"


LOGIN_SHELL = re.compile(r"\b(?:su|runuser|sudo)\b[^|;&]*\s(?:-|-l|--login|-i)(?:\s|$)")


# -- ordinary scripts stay checkable (tests/support/bash_cases.py CHECKABLE) ------------------------


@pytest.mark.parametrize("command", CHECKABLE)
def test_ordinary_arithmetic_and_names_stay_checkable(command: str, cwd: Path) -> None:
    assert not any(c.opaque for c in parse(command)), (command, parse(command))
    decision = bash(command, cwd, allow=EVERYTHING, deny=RM)
    assert decision.behavior == "allow", (command, decision.reason)
    assert bash(command, cwd, "bypassPermissions", deny=RM).behavior == "allow", command


@pytest.mark.parametrize("command", [
    "i=0; while (( i < 3 )); do (( i++ )); done",
    "n=5; echo $((n + 1))",
    "x=$((1 + 2)); echo $((x * 2))",
    "n=${#HOME}; echo $((n))",
    "declare -i n=3; n=n+1",
    "declare -a arr=(1 2 3); echo $((arr[1] + 1))",
    "declare -A h; h['key']=1; echo ${h['key']}",
    "declare -A h=( ['a b']=1 ); echo \"${h['a b']}\"",
])
def test_variables_given_numbers_by_the_command_are_not_opaque(command: str, cwd: Path) -> None:
    """They set variables (no allow rule covers that), but nothing in them is code."""
    assert not any(c.opaque for c in parse(command)), (command, parse(command))
    assert bash(command, cwd, "bypassPermissions", deny=RM).behavior == "allow", command


@pytest.mark.parametrize("command", [
    "for PATH in /tmp/evil; do git status; done", "read PATH < n.txt; git status",
    "printf -v LD_PRELOAD /tmp/x.so; git status", "mapfile -t IFS < n.txt; git status",
    ": ${PATH:=/tmp/x}; git status", "command export PATH=/tmp/evil; git status",
    "builtin declare -x LD_PRELOAD=$HOME/x.so; git status",
])
def test_builtins_that_set_environment_names_set_variables(command: str, cwd: Path) -> None:
    """Like `PATH=/tmp/evil git status`: what the allowed words run may change."""
    allow = ["Bash(git status:*)", "Bash(read:*)", "Bash(printf:*)", "Bash(mapfile:*)",
             "Bash(::*)", "Bash(export:*)", "Bash(declare:*)"]
    decision = bash(command, cwd, allow=allow)
    assert decision.behavior == "ask" and "sets variables" in decision.reason, decision.reason
    assert bash("for p in a b; do git status; done", cwd, allow=allow).behavior == "allow"


# -- what opaque means in each mode --------------------------------------------------------------

@pytest.mark.parametrize("command", ["$CMD victim", "eval \"$CMD\"", "echo $(( 'a[$(x)]' ))"])
def test_opaque_asks_in_default_and_is_denied_in_bypass_only_under_a_bash_deny(
        command: str, cwd: Path) -> None:
    for mode in ("default", "acceptEdits"):
        assert bash(command, cwd, mode, allow=["Bash(echo:*)", "Bash(eval:*)"]).behavior == \
            "ask"
        assert bash(command, cwd, mode, deny=RM).behavior == "ask"
    # Any Bash deny rule, even one about another program: it cannot be ruled out.
    for deny in (RM, ["Bash(git push:*)"], ["Bash(curl)"]):
        decision = bash(command, cwd, "bypassPermissions", deny=deny)
        assert decision.behavior == "deny", (command, deny)
        assert deny[0] in decision.reason and "cannot be" in decision.reason
    # No Bash deny rule: bypassPermissions allows it (a path rule is not a Bash rule).
    assert bash(command, cwd, "bypassPermissions").behavior == "allow"
    assert bash(command, cwd, "bypassPermissions", deny=["Edit(secrets/**)"]).behavior == "allow"


# -- end to end: a real teammate -------------------------------------------------------------------

