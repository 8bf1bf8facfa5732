"""`[PROVIDER:]MODEL`: the one parser and the one check that a model can run here, made before
anything is registered (spawn, SpawnTeammate, the lead's models); what doctor says of each
provider; ANTHROPIC_AUTH_TOKEN as Anthropic credentials.

The tests of tests/unit/runtime/models/test_spec.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.support.cli_runner import run_swarm
from tests.unit.runtime.models.test_spec import no_home_credentials  # noqa: F401 - the fixtures


@pytest.mark.parametrize(("model", "names"), [
    ("openai:gpt-5-mini", "OPENAI_API_KEY"),
    ("sonnet", "ANTHROPIC_API_KEY"),
    ("gpt-4o", "PROVIDER:MODEL"),
    ("mistral:large", "unknown model provider 'mistral'"),
    ("scripted:nope.json", "cannot read script"),
])
def test_spawn_refuses_before_registering(tmp_path: Path, model: str, names: str) -> None:
    team = Team.create("t")
    proc = run_swarm("spawn", "w2", "--team", "t", "--backend", "hidden", "--model", model,
                     "--prompt", "hi", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.splitlines()
    assert line.startswith("swarm: error: ") and names in line
    assert [m.name for m in team.members()] == ["team-lead"]
    assert not paths.agent_dir(team.name, "w2").exists()
    assert not paths.inbox(team.name, "w2").exists()
