"""Suggestions: when a person approves a call, the rules that would have covered it, narrowest
first, each checked to match it, with its scope; added at the member's scope, the next such call
of that member matches it (and another member's still asks)."""

from __future__ import annotations

import json
from pathlib import Path

from swarm.core.shell.suggest import suggestions
from tests.support.agent_fixtures import Crew
from tests.support.auto_support import records, requests, wait_records, wait_request


def rules_of(tool: str, args: dict[str, str], cwd: Path) -> list[tuple[str, ...]]:
    return [s.rules for s in suggestions(tool, args, cwd)]


def test_suggestions_are_narrowest_first_and_match_their_call(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    assert rules_of("Bash", {"command": "pytest -x t.py"}, tmp_path) == [
        ("Bash(pytest -x t.py)",), ("Bash(pytest:*)",)]
    assert rules_of("Bash", {"command": "git push origin x"}, tmp_path) == [
        ("Bash(git push origin x)",), ("Bash(git push:*)",)]
    assert rules_of("Bash", {"command": "cd src && make"}, tmp_path)[1] == (
        "Bash(cd:*)", "Bash(make:*)")
    python = suggestions("Bash", {"command": "python -c 1"}, tmp_path)
    assert [s.rules for s in python] == [("Bash(python -c 1)",)]  # never Bash(python:*)
    assert "set aside in auto" in python[0].covers
    assert rules_of("Edit", {"file_path": "src/pkg/a.py"}, tmp_path) == [
        (f"Edit({tmp_path}/src/pkg/a.py)",), ("Edit(src/pkg/**)",), ("Edit(src/**)",)]
    assert rules_of("Bash", {"command": "ls $X"}, tmp_path)[1:] == []  # no prefix from $X


def test_a_rule_added_at_the_members_scope_matches_its_next_call(crew: Crew) -> None:
    (crew.workdir / "t.txt").write_text("b\na\n")
    crew.spawn("w1", prompt="$ sort t.txt", permission_mode="default")
    request = wait_request(crew, "w1")
    proc = crew.cli("permissions", "suggest", request.request_id, "--json")
    assert proc.returncode == 0, proc.stderr
    offered = json.loads(proc.stdout)
    assert [o["rules"] for o in offered] == [["Bash(sort t.txt)"], ["Bash(sort:*)"]]
    assert offered[1]["scopes"] == ["member w1", "team"]
    proc = crew.cli("permissions", "approve", request.request_id, "--rule", "Bash(sort:*)",
                    "--scope", "member")
    assert proc.returncode == 0, proc.stderr
    assert "adding a rule for w1: Bash(sort:*)" in proc.stdout
    crew.wait_idle_notes("w1", 1)
    assert crew.team.member("w1").allow_rules == ["Bash(sort:*)"]
    assert crew.team.config().allowed_rules == []
    crew.send("w1", "$ sort -r t.txt")
    crew.wait_idle_notes("w1", 2)
    assert len(requests(crew, "w1")) == 1  # matched: not asked again
    again = wait_records(crew, "w1", 3)[-1]
    assert (again["call"], again["tier"]) == ("Bash: sort -r t.txt", "allow rule")
    crew.spawn("w2", prompt="$ sort t.txt", permission_mode="default")
    assert wait_request(crew, "w2").input == {"command": "sort t.txt"}  # its scope: w1's
    frequent = crew.cli("permissions", "suggest", "--min", "1", "--json")
    assert json.loads(frequent.stdout) == [{"member": "w1", "rules": ["Bash(sort:*)"],
                                            "approved": 1}]
    assert records(crew, "w1")[0]["who"] == "person"  # answered from a shell
