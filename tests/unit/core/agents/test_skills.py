"""`skills:` in an agent definition: each named skill's SKILL.md body is preloaded into the
teammate's system prompt (user skills always; project ones only in a trusted project)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarm.core.agents.definitions import parse_definition
from swarm.core.agents.skills import skills_part
from swarm.core.store import paths
from swarm.core.trust.summary import summarize
from swarm.core.trust.workspace import ProjectConfig, find_project_config
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))


def _skill(base: Path, name: str, body: str) -> Path:
    path = base / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: how to {name}\n---\n{body}\n")
    return path


def _definition(skills: str) -> None:
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "deployer.md").write_text(
        f"---\nname: deployer\ndescription: ships it\nskills: {skills}\n---\nYou deploy things.\n")


def _system(fake_api: FakeAnthropic, name: str) -> str:
    texts = [str(b["system"][0]["text"]) for b in fake_api.messages_requests()]
    (first, *_) = [t for t in texts if f"(agent id `{name}@crew`)" in t]
    return first


def test_skills_are_project_configuration_and_capped(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _skill(root / ".swarm" / "skills", "big", "x" * 100_000)
    config = find_project_config(root)
    assert ".swarm/skills/big/SKILL.md" in config.names()
    before = config.digest()
    _skill(root / ".swarm" / "skills", "big", "changed")
    assert find_project_config(root).digest() != before  # a changed skill needs trust again
    summary = summarize(find_project_config(root))  # what `swarm trust` shows
    assert summary.files == [".swarm/skills/big/SKILL.md"] and summary.problems == []
    _skill(root / ".swarm" / "skills", "big", "x" * 100_000)
    text, warnings = skills_part(["big", "../etc"], find_project_config(root))
    assert "[truncated" in text and len(text) < 30_000
    assert len(warnings) == 1 and warnings[0].startswith("skill '../etc' not found")


@pytest.mark.parametrize("value", ["[../secrets]", "[a/b]", "3", "[{x: 1}]"])
def test_a_skill_name_that_is_a_path_is_a_problem(value: str) -> None:
    found = parse_definition(f"---\nskills: {value}\n---\nbody\n", "d.md", "user", "d")
    assert isinstance(found, list) and found[0].field == "skills"
    ok = parse_definition("---\nskills: deploy, pdf-tools\n---\nbody\n", "d.md", "user", "d")
    assert not isinstance(ok, list) and ok.skills == ["deploy", "pdf-tools"] and not ok.warnings


def test_claude_codes_user_skills_load_below_swarms_own(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    none = ProjectConfig(None)
    claude = _skill(tmp_path / ".claude" / "skills", "review", "CLAUDE-REVIEW")
    text, warnings = skills_part(["review"], none)
    assert "CLAUDE-REVIEW" in text and f"({claude})" in text and warnings == []
    _skill(paths.user_skills_dir(), "review", "SWARM-REVIEW")
    text, _ = skills_part(["review"], none)
    assert "SWARM-REVIEW" in text and "CLAUDE-REVIEW" not in text
