"""Every value checked where it is written: `swarm config show` checks each
value of config.toml as the commands would and fails naming the file and the key; an error about
a value from config.toml, a variable or an agent definition names where it came from; a rule
naming a tool that does not exist is refused in one line listing the tools there are.

The tests of tests/unit/cli/test_values_checked.py that start processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.records.names import LEAD_NAME
from tests.support.agent_fixtures import Crew
from tests.support.helpers import one_error, run_cli
from tests.unit.cli.test_values_checked import UNKNOWN_TOOL, CaptureFixture, write_config


@pytest.mark.parametrize(("text", "variable", "expected"), [
    ('backend = "tmuxx"\n', None, "{path}: backend: unknown backend 'tmuxx'"),
    ('model = "sonet"\n', None, "{path}: model: unknown model 'sonet'"),
    ("", ("SWARM_BACKEND", "tmuxx"), "$SWARM_BACKEND: unknown backend 'tmuxx'"),
    ("", ("SWARM_MODEL", "sonet"), "$SWARM_MODEL: unknown model 'sonet'"),
])
def test_spawn_names_where_a_bad_default_came_from(
        crew: Crew, swarm_home: Path, capsys: CaptureFixture, monkeypatch: pytest.MonkeyPatch,
        text: str, variable: tuple[str, str] | None, expected: str) -> None:
    path = write_config(swarm_home, text)
    if variable:
        monkeypatch.setenv(*variable)
    code, out, err = run_cli(capsys, "spawn", "w1")
    assert code == 2, (out, err)
    assert one_error(err).startswith(f"swarm: error: {expected.format(path=path)}"), err
    assert [m.name for m in crew.team.members()] == [LEAD_NAME]



def test_spawn_names_the_definition_a_bad_model_came_from(
        crew: Crew, swarm_home: Path, capsys: CaptureFixture) -> None:
    definition = swarm_home / "agents" / "typo.md"
    definition.parent.mkdir(parents=True)
    definition.write_text("---\nname: typo\ndescription: a typo\nmodel: sonet\n---\nWork.\n")
    code, out, err = run_cli(capsys, "spawn", "w1", "--agent-type", "typo")
    assert code == 2, (out, err)
    assert one_error(err).startswith(
        f"swarm: error: {definition}: model: unknown model 'sonet'"), err



def test_spawn_refuses_a_rule_naming_an_unknown_tool(crew: Crew, capsys: CaptureFixture) -> None:
    for flag in ("--allow", "--deny"):
        code, out, err = run_cli(capsys, "spawn", "w1", "--model", "shell", flag, "Bsh(ls:*)")
        assert code == 2, (out, err)
        line = one_error(err)
        assert line.startswith(f"swarm: error: {UNKNOWN_TOOL}"), line
        assert "mcp__SERVER__TOOL" in line and "WebFetch" in line, line
    assert [m.name for m in crew.team.members()] == [LEAD_NAME]
