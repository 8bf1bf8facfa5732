"""TeamDelete (the seeds' tool) for `swarm lead` and `swarm mcp serve`, and TeamCreate's
`team_name` key: real lead and server processes, a real `shell` teammate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from swarm.core.team.team import Team
from tests.support.agent_fixtures import agent_processes
from tests.support.cli_runner import SWARM
from tests.support.helpers import wait_until
from tests.system.mcp.test_mcp_serve import call, ok, run, served

pytestmark = pytest.mark.usefixtures("lead_env")


def test_a_scripted_lead_deletes_its_team_with_a_running_shell_teammate(
        tmp_path: Path, swarm_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    script = tmp_path / "lead.json"
    script.write_text(json.dumps([
        {"tool_uses": [{"name": "SpawnTeammate", "input": {
            "name": "w", "prompt": "Wait.", "model": "shell",
            "permission_mode": "bypassPermissions"}}]},
        {"tool_uses": [{"name": "TeamDelete", "input": {"force": True}}]},
        {"text": "Deleted."}]))
    # --keep: a team the lead deleted is gone all the same
    proc = subprocess.run([SWARM, "lead", "--headless", "--model", f"scripted:{script}",
                           "--permission-mode", "bypassPermissions", "--backend", "hidden",
                           "--keep", "--team", "doomed", "go"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not Team("doomed").exists() and Team.list() == []
    assert wait_until(lambda: agent_processes(swarm_home) == [], timeout=10)


def test_a_served_lead_deletes_its_team_refused_while_working_unless_forced(
        tmp_path: Path, swarm_home: Path) -> None:
    log = tmp_path / "server.log"

    async def scenario() -> None:
        async with served(log=log, env={"SWARM_BACKEND": "hidden"}) as lead_:
            text, error = await call(lead_, "TeamCreate", name="a", team_name="b")
            assert error and "differ" in text and Team.list() == []
            created = await ok(lead_, "TeamCreate", team_name="seeded", description="d")
            assert "created team seeded;" in created
            await ok(lead_, "SpawnTeammate", name="worker", model="shell", prompt="Wait.")
            assert wait_until(lambda: len(agent_processes(swarm_home)) == 1, timeout=30)
            text, error = await call(lead_, "TeamDelete")
            assert error and "worker" in text and "force" in text and len(text.splitlines()) == 1
            assert Team("seeded").exists()
            text = await ok(lead_, "TeamDelete", force=True)
            assert "deleted team seeded" in text and "worker" in text
            assert not Team("seeded").exists()
            assert wait_until(lambda: agent_processes(swarm_home) == [], timeout=10)
            # the server leads no team now: another TeamCreate makes one
            again = await ok(lead_, "TeamCreate", name="second")
            assert "created team second;" in again
            await ok(lead_, "TeamDelete")  # nobody working: no force needed
            assert Team.list() == []

    run(scenario)


def test_a_served_member_has_no_team_delete(tmp_path: Path, swarm_home: Path) -> None:
    Team.create("alpha")
    log = tmp_path / "server.log"

    async def scenario() -> None:
        async with served("--team", "alpha", "--as", "bob", log=log) as member:
            names = {t.name for t in (await member.list_tools()).tools}
            assert "TeamDelete" not in names
            text, error = await call(member, "TeamDelete", force=True)
            assert error and "lead's" in text

    run(scenario)
    assert Team("alpha").exists()
