"""Every value checked where it is written: `swarm config show` checks each
value of config.toml as the commands would and fails naming the file and the key; an error about
a value from config.toml, a variable or an agent definition names where it came from; a rule
naming a tool that does not exist is refused in one line listing the tools there are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message, PermissionRequest, dump_structured
from swarm.core.team.team import Team
from tests.support.helpers import one_error, run_cli

CaptureFixture = pytest.CaptureFixture[str]
UNKNOWN_TOOL = ("invalid rule 'Bsh(ls:*)': unknown tool 'Bsh' (did you mean Bash?); known tools:"
                " Read, Write, Edit, Bash, Glob, Grep")


def write_config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(text)
    return path




@pytest.mark.parametrize(("text", "expected"), [
    ('backend = "tmuxx"\n', "backend: unknown backend 'tmuxx': use auto, tmux, iterm2, hidden"),
    ('model = "sonet"\n', "model: unknown model 'sonet': did you mean sonnet?"),
    ('model = "olama:qwen3"\n', "model: unknown model provider 'olama'"),
    ('permission_mode = "yolo"\n', "permission_mode must be one of default, acceptEdits, plan,"
                                   " auto, bypassPermissions, got 'yolo'"),
    ('[permissions]\nallow = ["Bsh(ls:*)"]\n', f"permissions.allow: {UNKNOWN_TOOL}"),
])
def test_config_show_refuses_a_bad_value_naming_the_file_and_the_key(
        swarm_home: Path, capsys: CaptureFixture, text: str, expected: str) -> None:
    path = write_config(swarm_home, text)
    code, out, err = run_cli(capsys, "config", "show")
    assert code == 2, (out, err)
    assert one_error(err).startswith(f"swarm: error: {path}: {expected}"), err
    # --json says it too, and fails the same way.
    code, out, err = run_cli(capsys, "config", "show", "--json")
    assert code == 2, (out, err)
    (problem,) = json.loads(out)["problems"]
    assert problem.startswith(f"{path}: {expected}"), problem


def test_config_show_lists_every_bad_value_and_still_shows_the_table(
        swarm_home: Path, capsys: CaptureFixture) -> None:
    path = write_config(swarm_home, 'backend = "tmuxx"\nmodel = "sonet"\n')
    code, out, err = run_cli(capsys, "config", "show")
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("swarm: error: ")]
    assert [e.split(": ")[3] for e in errors] == ["model", "backend"], err
    assert all(e.startswith(f"swarm: error: {path}: ") for e in errors), err
    assert "tmuxx" in out and "sonet" in out  # what is in the file, as it is


def test_config_show_of_good_values_exits_zero(swarm_home: Path, capsys: CaptureFixture) -> None:
    write_config(swarm_home, 'backend = "hidden"\nmodel = "ollama:qwen3-coder"\n'
                 'permission_mode = "acceptEdits"\n'
                 '[permissions]\nallow = ["Bash(ls:*)", "WebFetch", "mcp__calc__add"]\n')
    code, out, err = run_cli(capsys, "config", "show")
    assert code == 0, err
    assert err == ""


def test_the_lead_names_the_file_a_bad_model_came_from(
        swarm_home: Path, capsys: CaptureFixture) -> None:
    path = write_config(swarm_home, 'model = "sonet"\n')
    code, out, err = run_cli(capsys, "lead", "--headless", "hi")
    assert code == 2, (out, err)
    assert one_error(err).startswith(f"swarm: error: {path}: model: unknown model 'sonet'"), err


# -- rules naming a tool that does not exist ----------------------------------------------------

def test_the_lead_refuses_a_rule_naming_an_unknown_tool(capsys: CaptureFixture) -> None:
    code, out, err = run_cli(capsys, "lead", "--headless", "--model", "scripted:x.json",
                             "--allow", "Bsh(ls:*)", "hi")
    assert code == 2, (out, err)
    assert one_error(err).startswith(f"swarm: error: {UNKNOWN_TOOL}"), err


def test_a_typed_approval_rule_naming_an_unknown_tool_is_refused(
        capsys: CaptureFixture, tmp_path: Path) -> None:
    team = Team.create("forge")
    team.add_member("w1", cwd=str(tmp_path))
    request = PermissionRequest(agent_id=f"w1@{team.name}", tool_name="Bash",
                                description="list", input={"command": "ls"})
    team.inbox(LEAD_NAME, checked=False).deliver([Message(sender="w1",
                                                        text=dump_structured(request))])
    code, out, err = run_cli(capsys, "permissions", "approve", request.request_id[:8],
                             "--team", team.name, "--rule", "Bsh(ls:*)")
    assert code == 2, (out, err)
    assert one_error(err).startswith(f"swarm: error: {UNKNOWN_TOOL}"), err
    assert team.config().allowed_rules == []


@pytest.mark.parametrize("rule", ["Bash(ls:*)", "Read(src/**)", "Edit", "WebFetch",
                                  "mcp__calc", "mcp__calc__add", "SendMessage", "Agent"])
def test_rules_naming_real_tools_are_accepted(rule: str) -> None:
    from swarm.core.shell.rules import validate_rule

    assert validate_rule(rule) == rule


def test_a_typed_rule_may_name_the_tool_a_request_asks_about() -> None:
    """An agent CLI's own tool swarm does not list is known once a request names it: `approve
    --rule` may name it (typed_rule passes it), anywhere else it is refused."""
    from swarm.core.shell.rules import validate_rule
    from swarm.errors import BadInputError

    assert validate_rule("Monitor", also=("Monitor",)) == "Monitor"
    with pytest.raises(BadInputError, match="unknown tool 'Monitor'"):
        validate_rule("Monitor")
