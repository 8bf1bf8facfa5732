"""`skills:` in an agent definition: each named skill's SKILL.md body is preloaded into the
teammate's system prompt (user skills always; project ones only in a trusted project).

The tests of tests/unit/core/agents/test_skills.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarm.core.store import paths
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.unit.core.agents.test_skills import (
    _definition,
    _skill,
    _system,
    credentials,  # noqa: F401 - the fixtures
)


@pytest.fixture
def repo(crew: Crew) -> Path:
    root = crew.workdir / "repo"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def test_a_user_skill_is_preloaded_and_a_missing_one_warned(
        crew: Crew, fake_api: FakeAnthropic, repo: Path) -> None:
    skill = _skill(paths.home() / "skills", "deploy", "DEPLOY-SKILL-BODY: run make ship")
    _definition("[deploy, nosuch]")
    crew.spawn("d1", prompt="go", model="sonnet", agent_type="deployer", cwd=str(repo))
    crew.wait_idle_notes("d1", 1)
    system = _system(fake_api, "d1")
    assert "DEPLOY-SKILL-BODY: run make ship" in system
    assert f"## Skill `deploy` ({skill})" in system
    assert "description: how to deploy" not in system  # the front matter is not the body
    assert system.index("You deploy things.") < system.index("DEPLOY-SKILL-BODY")
    assert system.index("DEPLOY-SKILL-BODY") < system.index("# Your team")
    log = crew.log("d1")
    assert "skill 'nosuch' not found" in log and log.count("skill 'nosuch'") == 1



def test_a_project_skill_needs_a_trusted_project(
        crew: Crew, fake_api: FakeAnthropic, repo: Path) -> None:
    _skill(paths.home() / "skills", "deploy", "USER-DEPLOY-BODY")
    project_skill = _skill(repo / ".claude" / "skills", "deploy", "PROJECT-DEPLOY-BODY")
    _definition("deploy")
    crew.spawn("u1", prompt="go", model="sonnet", agent_type="deployer", cwd=str(repo))
    crew.wait_idle_notes("u1", 1)
    untrusted = _system(fake_api, "u1")
    assert "USER-DEPLOY-BODY" in untrusted and "PROJECT-DEPLOY-BODY" not in untrusted
    assert ".claude/skills/deploy/SKILL.md" in crew.log("u1")  # the untrusted notice names it

    crew.spawn("t1", prompt="go", model="sonnet", agent_type="deployer", cwd=str(repo),
               trust_project=True)
    crew.wait_idle_notes("t1", 1)
    trusted = _system(fake_api, "t1")
    assert "PROJECT-DEPLOY-BODY" in trusted and "USER-DEPLOY-BODY" not in trusted
    assert f"({project_skill})" in trusted
