"""Agent definitions from Claude Code's two other sources, with their precedence (lowest
first): built-in < plugin < user < project < policy.

The tests of tests/unit/core/agents/test_definitions_sources.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.team.team import Team
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.unit.core.agents.test_definitions_sources import (
    policy,  # noqa: F401 - the fixtures
    write,
)

pytestmark = pytest.mark.usefixtures("trust_projects")



def test_a_teammate_runs_the_teams_policy_definition_whatever_its_environment(
        tmp_path: Path, policy: Path, monkeypatch: pytest.MonkeyPatch,
        fake_api: FakeAnthropic) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("HOME", str(tmp_path))
    write(policy / "agents/auditor.md", "---\ndescription: audits\n---\nMANAGED-AUDITOR\n")
    other = tmp_path / "other-policy"
    write(other / "agents/auditor.md", "---\ndescription: audits\n---\nSWAPPED-AUDITOR\n")
    monkeypatch.setenv("SWARM_POLICY_DIR", str(policy))
    team = Team.create("crew")
    monkeypatch.setenv("SWARM_TEAM", team.name)
    monkeypatch.setenv("SWARM_POLICY_DIR", str(other))  # the spawner's and teammate's env
    crew = Crew(team, tmp_path)
    try:
        crew.spawn("a1", prompt="go", model="sonnet", agent_type="auditor")
        crew.wait_idle_notes("a1", 1)
    finally:
        crew.cleanup()
    (system,) = [str(b["system"][0]["text"]) for b in fake_api.messages_requests()]
    assert "MANAGED-AUDITOR" in system and "SWAPPED-AUDITOR" not in system
