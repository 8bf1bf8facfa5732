"""`swarm permissions check` names the tier that would decide a call and what the reviewer would
be shown, and runs nothing; `swarm permissions log` shows the decision records."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.agent_fixtures import Crew
from tests.support.auto_support import checkout, reviewed, reviewer


def check(crew: Crew, *args: str, name: str = "alice") -> dict[str, object]:
    proc = crew.cli("permissions", "check", "--as", name, "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_check_names_the_tier_and_runs_nothing(crew: Crew, tmp_path: Path) -> None:
    checkout(crew)
    prog, log = reviewer(tmp_path, "allow")
    crew.register("alice", permission_mode="auto", reviewer=f"command:{prog}",
                  ask_rules=["Bash(git push:*)"])
    marker = tmp_path / "ran"
    added = crew.cli("tasks", "add", "fix a", "--owner", "alice")
    assert added.returncode == 0, added.stderr
    cases = {("--", "git", "status"): "safe", ("--", "rm", "-rf", "/"): "forbidden",
             ("--", "pytest", "-x"): "reviewer", ("--", "git", "push"): "ask",
             ("--tool", "Edit", "--path", "src/x.py"): "safe",
             ("--", f"touch {marker}"): "reviewer"}
    for args, tier in cases.items():
        assert check(crew, *args)["tier"] == tier, args
    found = check(crew, "--", "pytest", "-x")
    request = found["review_request"]
    assert isinstance(request, dict) and request["pending"]["call"] == "Bash: pytest -x"
    (task,) = request["assignment"]["tasks"]
    assert (task["subject"], task["created_by"]) == ("fix a", "a person")
    human = crew.cli("permissions", "check", "--as", "alice", "--", "git", "push")
    assert "tier: ask" in human.stdout and "a person is asked" in human.stdout
    assert reviewed(log) == [] and not marker.exists()
    bad = crew.cli("permissions", "check", "--as", "nobody", "--", "ls")
    assert bad.returncode != 0 and bad.stderr.startswith("swarm: error:")


def test_log_shows_who_decided(crew: Crew, tmp_path: Path) -> None:
    checkout(crew)
    prog, _ = reviewer(tmp_path, "deny")
    crew.spawn("w1", prompt="$ ls\n$ touch x", permission_mode="auto",
               reviewer=f"command:{prog}")
    crew.wait_idle_notes("w1", 1)
    proc = crew.cli("permissions", "log", "w1", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [(r["call"], r["tier"], r["who"], r["behavior"]) for r in rows[:2]] == [
        ("Bash: ls", "safe", "rules", "allow"), ("Bash: touch x", "reviewer", "reviewer", "deny")]
    human = crew.cli("permissions", "log")
    assert "reviewer" in human.stdout and "Bash: touch x" in human.stdout


def test_the_report_counts_each_members_decisions(crew: Crew, tmp_path: Path) -> None:
    checkout(crew)
    prog, _ = reviewer(tmp_path, "deny")
    crew.spawn("w1", prompt="$ ls\n$ cat src/a.py\n$ touch x\n$ cat ~/.ssh/id_rsa",
               permission_mode="auto", reviewer=f"command:{prog}")
    crew.wait_idle_notes("w1", 1)
    proc = crew.cli("report", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = [m for m in json.loads(proc.stdout)["members"] if m["name"] == "w1"]
    found = row["permissions"]
    assert found["by_tier"] == {"safe": 3, "reviewer": 1, "forbidden": 1}  # with its report
    assert (found["reviewer"]["deny"], found["reviewer"]["allow"]) == (1, 0)
    assert found["forbidden"] == 1 and found["asked"] == {"count": 0, "wait_s": 0}
    assert found["paused"] is False


def test_ask_rules_and_the_reviewer_from_the_users_settings(crew: Crew, tmp_path: Path) -> None:
    from swarm.core.store import paths

    checkout(crew)
    prog, _ = reviewer(tmp_path, "allow")
    (paths.home() / "config.toml").write_text(
        f'[permissions]\nask = ["Bash(git push:*)"]\nreviewer = "command:{prog}"\n')
    crew.spawn("w1", permission_mode="auto")
    assert crew.team.member("w1").reviewer == f"command:{prog}"
    assert check(crew, "--", "git", "push", name="w1")["tier"] == "ask"
    proc = crew.cli("permissions", "check", "--as", "w1", "--json", "--", "git", "push")
    assert json.loads(proc.stdout)["person_only"] is True
