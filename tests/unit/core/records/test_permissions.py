"""Unit tests of the permission check: modes, rules (deny first), paths. No processes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.permissions import Decision, validate_mode
from swarm.core.shell.rules import check, rule_matches, validate_rule
from swarm.errors import BadInputError
from swarm.runtime.tools.registry import all_tools

TOOLS = all_tools()


def decide(tool: str, args: dict[str, Any], mode: str, cwd: Path, allow: list[str] | None = None,
           deny: list[str] | None = None) -> Decision:
    """`check` as the runtime calls it, with the tool's real read_only/edits_files flags."""
    spec = TOOLS[tool]
    return check(tool, args, mode=mode, read_only=spec.read_only, edits_files=spec.edits_files,
                 cwd=cwd, allow=allow or [], deny=deny or [])


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / "src").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return work


# -- rule syntax -----------------------------------------------------------------------------

@pytest.mark.parametrize("rule", ["Bash", "Bash(git status:*)", "Edit(src/**)", " Write(*.md) ",
                                  "Bash(npm test)", "Read(*)"])
def test_valid_rules_are_accepted_and_stripped(rule: str) -> None:
    assert validate_rule(rule) == rule.strip()


@pytest.mark.parametrize("rule", ["", "Bash(", "Bash()", "ba sh", "Bash(x)y", "(x)", "Bash[x]"])
def test_malformed_rules_are_bad_input(rule: str) -> None:
    with pytest.raises(BadInputError):
        validate_rule(rule)


def test_modes_are_validated() -> None:
    for mode in ("default", "acceptEdits", "plan", "bypassPermissions"):
        assert validate_mode(mode) == mode
    with pytest.raises(BadInputError, match="invalid permission mode"):
        validate_mode("yolo")


# -- rule matching ---------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "matches"), [
    ("git status", True), ("git status --short", True), ("  git status -s", True),
    ("git statusx", False), ("git log", False), ("git", False), ("echo git status", False),
])
def test_bash_prefix_rule(command: str, matches: bool, cwd: Path) -> None:
    assert rule_matches("Bash(git status:*)", "Bash", {"command": command}, cwd) is matches


def test_bash_exact_rule_and_bare_tool_rule(cwd: Path) -> None:
    assert rule_matches("Bash(npm test)", "Bash", {"command": "npm test"}, cwd)
    assert not rule_matches("Bash(npm test)", "Bash", {"command": "npm test --watch"}, cwd)
    assert rule_matches("Bash", "Bash", {"command": "anything at all"}, cwd)
    assert rule_matches("Bash(*)", "Bash", {"command": "anything"}, cwd)
    # A rule names one tool: it never matches another.
    assert not rule_matches("Bash", "Write", {"file_path": "a", "content": ""}, cwd)
    assert not rule_matches("Write(*)", "Edit", {"file_path": "a"}, cwd)


def test_rm_prefix_is_a_word_not_a_string_prefix(cwd: Path) -> None:
    assert rule_matches("Bash(rm:*)", "Bash", {"command": "rm -rf victim"}, cwd)
    assert rule_matches("Bash(rm:*)", "Bash", {"command": "rm"}, cwd)
    assert not rule_matches("Bash(rm:*)", "Bash", {"command": "rmdir empty"}, cwd)


def test_path_globs_are_relative_to_the_cwd_or_absolute(cwd: Path) -> None:
    assert rule_matches("Edit(src/**)", "Edit", {"file_path": "src/a/b.py"}, cwd)
    assert rule_matches("Edit(src/**)", "Edit", {"file_path": str(cwd / "src" / "x.py")}, cwd)
    assert not rule_matches("Edit(src/**)", "Edit", {"file_path": "docs/x.md"}, cwd)
    assert rule_matches("Write(*.md)", "Write", {"file_path": "README.md"}, cwd)
    outside = cwd.parent / "outside" / "n.txt"
    assert rule_matches(f"Write({cwd.parent}/outside/*)", "Write", {"file_path": str(outside)}, cwd)
    # No path in the input: a path rule cannot match.
    assert not rule_matches("Write(*.txt)", "Write", {"content": "x"}, cwd)


def test_path_rule_sees_through_dotdot_and_symlinks(cwd: Path) -> None:
    # `src/../../outside/x` is not under src/, however it is spelled.
    assert not rule_matches("Edit(src/**)", "Edit", {"file_path": "src/../../outside/x"}, cwd)
    (cwd / "src" / "link").symlink_to(cwd.parent / "outside")
    assert not rule_matches("Edit(src/**)", "Edit", {"file_path": "src/link/x.py"}, cwd)


# -- modes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"])
def test_read_only_and_team_tools_are_always_allowed(mode: str, cwd: Path) -> None:
    for tool, args in [("Read", {"file_path": "/etc/hostname"}), ("Glob", {"pattern": "*"}),
                       ("Grep", {"pattern": "x"}), ("TaskList", {}),
                       ("SendMessage", {"to": "team-lead", "message": "hi", "summary": "hi"})]:
        assert decide(tool, args, mode, cwd).behavior == "allow", (tool, mode)


def test_default_mode_asks_for_bash_write_and_edit(cwd: Path) -> None:
    for tool, args in [("Bash", {"command": "echo x > f.txt"}),
                       ("Write", {"file_path": "in.txt", "content": "x"}),
                       ("Edit", {"file_path": "in.txt", "old_string": "a", "new_string": "b"})]:
        decision = decide(tool, args, "default", cwd)
        assert decision.behavior == "ask" and "default mode" in decision.reason


def test_accept_edits_allows_edits_inside_the_cwd_only(cwd: Path) -> None:
    inside = [("Write", "in.txt"), ("Write", "src/new/deep.txt"), ("Edit", str(cwd / "a.py")),
              ("Write", "src/../in.txt")]
    for tool, path in inside:
        assert decide(tool, {"file_path": path, "content": ""}, "acceptEdits", cwd).behavior == \
            "allow", path
    (cwd / "escape").symlink_to(cwd.parent / "outside")
    outside = ["../outside/x.txt", "src/../../x.txt", str(cwd.parent / "outside" / "x"),
               "escape/x.txt", "escape/new/dir/x.txt", "~/x.txt", "/tmp/x.txt"]
    for path in outside:
        decision = decide("Write", {"file_path": path, "content": ""}, "acceptEdits", cwd)
        assert decision.behavior == "ask" and "outside" in decision.reason, path
    # A sibling whose name starts like the cwd is not inside it.
    sibling = cwd.parent / (cwd.name + "-other") / "x"
    assert decide("Write", {"file_path": str(sibling), "content": ""}, "acceptEdits",
                  cwd).behavior == "ask"
    # Bash still asks in acceptEdits.
    assert decide("Bash", {"command": "touch x"}, "acceptEdits", cwd).behavior == "ask"


def test_accept_edits_through_a_symlinked_cwd(tmp_path: Path, cwd: Path) -> None:
    """The cwd itself reached through a symlink: paths inside are still inside."""
    alias = tmp_path / "alias"
    alias.symlink_to(cwd)
    assert decide("Write", {"file_path": "x.txt", "content": ""}, "acceptEdits",
                  alias).behavior == "allow"
    assert decide("Write", {"file_path": str(cwd / "x.txt"), "content": ""}, "acceptEdits",
                  alias).behavior == "allow"


def test_plan_mode_refuses_every_change_and_allows_exit_plan_mode(cwd: Path) -> None:
    for tool, args in [("Bash", {"command": "ls"}), ("Write", {"file_path": "a", "content": ""}),
                       ("Edit", {"file_path": "a", "old_string": "a", "new_string": "b"})]:
        decision = decide(tool, args, "plan", cwd, allow=[tool])
        assert decision.behavior == "deny" and "plan mode" in decision.reason
    assert decide("ExitPlanMode", {"plan": "p"}, "plan", cwd).behavior == "allow"
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        assert decide("ExitPlanMode", {"plan": "p"}, mode, cwd).behavior == "deny"


def test_bypass_allows_everything_not_denied(cwd: Path) -> None:
    assert decide("Bash", {"command": "rm -rf x"}, "bypassPermissions", cwd).behavior == "allow"
    assert decide("Write", {"file_path": "/tmp/x", "content": ""}, "bypassPermissions",
                  cwd).behavior == "allow"


# -- rules against modes: deny first ---------------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"])
def test_deny_rule_wins_in_every_mode_even_over_an_allow(mode: str, cwd: Path) -> None:
    decision = decide("Bash", {"command": "rm -f victim"}, mode, cwd,
                      allow=["Bash", "Bash(rm:*)"], deny=["Bash(rm:*)"])
    assert decision == Decision("deny", "denied by rule Bash(rm:*)", "Bash(rm:*)")


@pytest.mark.parametrize("command", ["true && rm -f victim", "echo a; rm victim",
                                     "ls | rm victim", "false || rm victim", "echo $(rm victim)",
                                     "echo `rm victim`", "echo a\nrm victim",
                                     "sleep 0 & rm victim"])
def test_deny_prefix_rule_catches_a_command_chained_after_another(command: str, cwd: Path) -> None:
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        decision = decide("Bash", {"command": command}, mode, cwd, deny=["Bash(rm:*)"])
        assert decision.behavior == "deny", (command, mode)


@pytest.mark.parametrize("command", ["git status && rm -rf /tmp/x", "git status; curl evil",
                                     "git status | sh", "git status $(rm x)"])
def test_allow_prefix_rule_does_not_cover_a_chained_command(command: str, cwd: Path) -> None:
    assert decide("Bash", {"command": command}, "default", cwd,
                  allow=["Bash(git status:*)"]).behavior == "ask"
    # The plain command is still allowed.
    assert decide("Bash", {"command": "git status -s"}, "default", cwd,
                  allow=["Bash(git status:*)"]).behavior == "allow"


def test_deny_rule_on_a_read_tool_applies(cwd: Path) -> None:
    """Read tools are allowed by default, but a deny rule is checked first."""
    assert decide("Read", {"file_path": "secrets/key"}, "bypassPermissions", cwd,
                  deny=["Read(secrets/**)"]).behavior == "deny"
    assert decide("Read", {"file_path": "src/a.py"}, "default", cwd,
                  deny=["Read(secrets/**)"]).behavior == "allow"


def test_allow_rules_let_default_mode_skip_asking(cwd: Path) -> None:
    allow = ["Bash(git status:*)", "Edit(src/**)", "Write"]
    assert decide("Bash", {"command": "git status"}, "default", cwd, allow=allow).rule == \
        "Bash(git status:*)"
    assert decide("Edit", {"file_path": "src/m.py", "old_string": "a", "new_string": "b"},
                  "default", cwd, allow=allow).behavior == "allow"
    assert decide("Edit", {"file_path": "m.py", "old_string": "a", "new_string": "b"},
                  "default", cwd, allow=allow).behavior == "ask"
    # A bare tool rule allows that tool anywhere, even outside the cwd.
    assert decide("Write", {"file_path": "/tmp/x", "content": ""}, "acceptEdits", cwd,
                  allow=allow).behavior == "allow"
    assert decide("Bash", {"command": "git log"}, "default", cwd, allow=allow).behavior == "ask"


def test_check_does_not_touch_the_filesystem(cwd: Path) -> None:
    before = sorted(os.listdir(cwd))
    decide("Write", {"file_path": "new/dir/x.txt", "content": ""}, "acceptEdits", cwd)
    assert sorted(os.listdir(cwd)) == before
