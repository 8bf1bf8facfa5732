"""Protected paths: writes into `.git/`, `.swarm/`,
`.claude/`, `.mcp.json` and `$SWARM_HOME`, by Write/Edit or a Bash write, ask in `default` and
`acceptEdits` under any allow rule that does not name the path; `bypassPermissions` allows them.
Unit tests of `swarm.core.shell.rules` (table-driven)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.store import paths
from tests.support.rule_helpers import bash, decide
from tests.unit.core.shell.test_evaluation import EVERYTHING

# -- protected paths ---------------------------------------------------------------------------

PROTECTED = [".git/config", ".git/hooks/pre-commit", "sub/.git/config", ".swarm/settings.json",
             ".swarm/agents/general-purpose.md", ".claude/settings.json",
             "pkg/.claude/agents/x.md", ".mcp.json", "sub/.mcp.json", "src/../.git/config"]


@pytest.mark.parametrize("path", PROTECTED)
def test_edits_to_protected_paths_ask_under_any_rule_but_bypass(path: str, cwd: Path) -> None:
    for tool, args in [("Write", {"file_path": path, "content": "x"}),
                       ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"})]:
        for allow in (["Edit"], ["Write", "Edit"], ["Edit(**)"], ["Edit(*/**)", "Edit(.*/**)",
                                                                  "Edit(.*)", "Edit(**/*)"]):
            decision = decide(tool, args, "default", cwd, allow=allow)
            assert decision.behavior == "ask", (tool, path, allow)
            assert "protected" in decision.reason
        assert decide(tool, args, "acceptEdits", cwd).behavior == "ask", (tool, path)
        assert decide(tool, args, "bypassPermissions", cwd).behavior == "allow"


def test_a_rule_that_names_the_protected_path_exactly_allows_it(cwd: Path) -> None:
    write = {"file_path": ".git/info/exclude", "content": "x"}
    assert decide("Write", write, "default", cwd, allow=["Edit(.git/info/exclude)"]).behavior == \
        "allow"
    assert decide("Write", write, "acceptEdits", cwd,
                  allow=[f"Write({cwd}/.git/info/exclude)"]).behavior == "allow"
    assert decide("Write", write, "default", cwd, allow=["Edit(.git/**)"]).behavior == "ask"
    assert decide("Write", {"file_path": ".git/config", "content": "x"}, "default", cwd,
                  allow=["Edit(.git/info/exclude)"]).behavior == "ask"


def test_swarm_home_is_protected_but_a_worktree_in_it_is_not(tmp_path: Path) -> None:
    home = paths.home()
    team_file = home / "teams" / "t" / "config.json"
    inbox = home / "teams" / "t" / "inboxes" / "team-lead.jsonl"
    for target in (team_file, inbox):
        decision = decide("Write", {"file_path": str(target), "content": "x"}, "default",
                          tmp_path, allow=["Write"])
        assert decision.behavior == "ask" and "protected" in decision.reason, target
    worktree = home / "teams" / "t" / "worktrees" / "w"
    (worktree / "src").mkdir(parents=True)
    assert decide("Write", {"file_path": "src/x.py", "content": "x"}, "acceptEdits",
                  worktree).behavior == "allow"
    assert decide("Bash", {"command": "echo x > src/x.py"}, "default", worktree,
                  allow=["Bash(echo:*)"]).behavior == "allow"
    assert decide("Write", {"file_path": ".git", "content": "x"}, "acceptEdits",
                  worktree).behavior == "ask"


BASH_PROTECTED = [
    "echo x >> .git/config",
    "echo x > .swarm/settings.json",
    "echo x &> .claude/settings.json",
    "echo '{}' > .mcp.json",
    "echo x > sub/.git/hooks/pre-commit",
    "echo x | tee .claude/settings.json",
    "echo x | tee -a out.txt .mcp.json",
    "cp evil.sh .git/hooks/pre-commit",
    "cp evil.sh .git/hooks/",
    "cp -t .git/hooks evil.sh",
    "cp --target-directory=.git/hooks evil.sh",
    "mv evil.json .mcp.json",
    "mv -f evil.json .swarm/settings.json",
    "ln -s ../evil.sh .git/hooks/post-checkout",
    "ln -sf /tmp/x .claude",
    "cd .git && echo x > config",
    "cd sub && echo x > ../.swarm/settings.json",
    "echo x > ./.git/config",
    "echo x > src/../.git/config",
]


@pytest.mark.parametrize("command", BASH_PROTECTED)
def test_bash_writes_to_protected_paths_ask_under_allow_rules(command: str, cwd: Path) -> None:
    (cwd / "sub").mkdir()
    for mode in ("default", "acceptEdits"):
        decision = bash(command, cwd, mode, allow=EVERYTHING)
        assert decision.behavior == "ask", (command, mode, decision.reason)
        assert "protected" in decision.reason, decision.reason
    assert bash(command, cwd, "default", allow=["Bash"]).behavior == "ask"
    assert bash(command, cwd, "bypassPermissions").behavior == "allow"


def test_a_bash_rule_that_names_the_protected_path_allows_the_write(cwd: Path) -> None:
    exact = "echo '*.log' >> .git/info/exclude"
    assert bash(exact, cwd, allow=[f"Bash({exact})"]).behavior == "allow"
    named = ["Bash(echo:*)", "Bash(tee -a .git/info/exclude:*)"]
    assert bash("echo x | tee -a .git/info/exclude", cwd, allow=named).behavior == "allow"
    assert bash("echo x | tee -a .git/config", cwd, allow=named).behavior == "ask"
    assert bash("echo x >> .git/info/exclude", cwd, allow=named).behavior == "ask"


@pytest.mark.parametrize("command", [
    "echo x > .gitignore", "echo x > git/config", "echo x > my.git/config",
    "echo x > .github/workflows/ci.yml", "echo x > src/.mcp.json.bak", "cp a.txt b.txt",
    "mv a.txt src/", "ln -s a.txt b.txt", "echo x | tee .swarmrc",
])
def test_paths_that_only_look_protected_are_not(command: str, cwd: Path) -> None:
    assert bash(command, cwd, allow=EVERYTHING).behavior == "allow", command


def test_cp_mv_ln_targets_are_writes_an_allow_rule_keeps_in_the_cwd(cwd: Path) -> None:
    for command in ["cp a.txt /tmp/b.txt", "mv a.txt ../", "ln -s a.txt /tmp/link",
                    "cp -t /tmp a.txt"]:
        assert bash(command, cwd, allow=EVERYTHING).behavior == "ask", command
    assert bash("cp a.txt secrets/k", cwd, "bypassPermissions",
                deny=["Edit(secrets/**)"]).behavior == "deny"


@pytest.mark.parametrize("command", [
    "echo '{}' > .github/hooks/start.json", "echo x > .github/copilot-instructions.md",
    "echo x > sub/.github/agents/a.md", "echo x > .GitHub/Instructions/a.instructions.md",
])
def test_a_kinds_folder_inside_another_folder_is_protected(command: str, cwd: Path) -> None:
    """Copilot's configuration sits inside `.github/` beside the workflows: its own folders and
    file ask, the rest of `.github/` does not (above)."""
    assert bash(command, cwd, allow=EVERYTHING).behavior == "ask", command

