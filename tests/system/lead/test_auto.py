"""An auto lead (`swarm lead --permission-mode auto --reviewer command:R --ask RULE`): its own
forbidden calls are denied in bypass and in auto, and a teammate it spawns is auto with its
reviewer and ask rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swarm.core.team import decisions
from swarm.core.team.team import Team
from tests.support.auto_support import reviewer
from tests.support.cli_runner import run_swarm
from tests.support.lead_fixtures import lead

pytestmark = pytest.mark.usefixtures("lead_env")


@pytest.mark.parametrize("mode", ["auto", "bypassPermissions"])
def test_a_leads_forbidden_calls_are_denied_and_its_teammate_is_auto(tmp_path: Path,
                                                                     mode: str) -> None:
    (tmp_path / ".ssh").mkdir()  # lead_env: HOME is tmp_path
    (tmp_path / ".ssh" / "id_rsa").write_text("KEY-MARKER-77\n")
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    prog, log = reviewer(tmp_path, "allow")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [
            {"name": "Bash", "input": {"command": "echo x >> .git/config"}},
            {"name": "Bash", "input": {"command": "cat ~/.ssh/id_rsa"}},
            {"name": "SpawnTeammate", "input": {
                "name": "w", "prompt": "$ cat ~/.ssh/id_rsa", "model": "shell"}}]},
        {"text": "Done."}]))
    proc = lead("--permission-mode", mode, "--reviewer", f"command:{prog}", "--ask",
                "Bash(git push:*)", "--allow", "Bash(echo x >> .git/config)", "--keep",
                "--team", "boss", "go", cwd=work, model=f"scripted:{script}")
    assert proc.returncode == 0, proc.stderr
    assert (work / ".git" / "config").read_text() == "[core]\n"
    own = decisions.calls("boss", "team-lead")
    assert [(r["tier"], r["behavior"]) for r in own[:2]] == [("forbidden", "deny")] * 2
    member = Team.open("boss").member("w")
    assert (member.permission_mode, member.reviewer, member.ask_rules) == (
        mode, f"command:{prog}", ["Bash(git push:*)"])
    (read,) = decisions.calls("boss", "w")[:1]
    assert (read["tier"], read["behavior"]) == ("forbidden", "deny")
    status = run_swarm("status", "--team", "boss", "--json")
    assert status.returncode == 0, status.stderr
    assert f'"mode": "{mode}"' in status.stdout.replace('":"', '": "')
    assert "KEY-MARKER-77" not in proc.stdout + proc.stderr
    assert not log.exists()


def test_with_approvals_lead_an_ask_rule_waits_for_a_person_not_the_leads_model(
        tmp_path: Path) -> None:
    """Headless, nobody is there: the request is denied at the permission timeout, and the
    lead's model was never woken with it."""
    work = tmp_path / "work"
    work.mkdir()
    prog, log = reviewer(tmp_path, "allow")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "SpawnTeammate", "input": {
            "name": "w", "prompt": "$ git push origin HEAD", "model": "shell"}}]},
        {"text": "Done."}]))
    proc = lead("--permission-mode", "auto", "--approvals", "lead", "--reviewer",
                f"command:{prog}", "--ask", "Bash(git push:*)", "--keep", "--team", "asks",
                "go", cwd=work, model=f"scripted:{script}",
                env={"SWARM_PERMISSION_TIMEOUT": "3"})
    assert proc.returncode == 0, proc.stderr
    (push,) = [r for r in decisions.calls("asks", "w") if r["call"] == "Bash: git push origin HEAD"]
    assert (push["tier"], push["behavior"], push["who"]) == ("ask", "deny", "timeout")
    assert push["asked"]["person_only"] is True
    path = Path(os.environ["SWARM_HOME"]) / "teams" / "asks" / "agents" / "team-lead"
    entries = [json.loads(line) for line in (path / "transcript.jsonl").read_text().splitlines()]
    woken_with = [b.get("text", "") for e in entries if e.get("kind") == "message"
                  and e["message"]["role"] == "user" for b in e["message"]["content"]
                  if isinstance(b, dict) and b.get("type") == "text"]
    # (The teammate's own report of the denial may wake it: a message, not a request.)
    assert woken_with and not any("<permission-request" in text for text in woken_with)
    assert not log.exists()
