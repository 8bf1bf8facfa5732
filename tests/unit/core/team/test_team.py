"""The team file and team lifecycle (`Team`, core.team.team)."""

from __future__ import annotations

import json
import os
import stat

import psutil
import pytest

from swarm.core.records import base as records
from swarm.core.records.state import AgentState
from swarm.core.records.team_config import TeamConfig
from swarm.core.store import paths
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.errors import BadInputError, NotFoundError, SwarmError


def record_process(team: Team, name: str, pid: int, started_at: float | None = None) -> None:
    created = psutil.Process(pid).create_time() if started_at is None else started_at
    write_state(team.name, name, AgentState(state="working", pid=pid, started_at=created))


# -- create / open / list -----------------------------------------------------------------------
def test_create_writes_the_team_file() -> None:
    team = Team.create("alpha", description="the A team")
    assert team.name == "alpha"
    config = team.config()
    assert config.name == "alpha" and config.description == "the A team"
    assert config.lead_agent_id == "team-lead@alpha"
    assert config.created_at.endswith("Z")
    assert len(config.lead_session_id) == 36
    assert [(m.name, m.agent_id) for m in config.members] == [("team-lead", "team-lead@alpha")]
    assert config.allowed_rules == []
    assert paths.inboxes_dir("alpha").is_dir() and paths.tasks_dir("alpha").is_dir()
    on_disk = json.loads(paths.team_config("alpha").read_text())
    assert on_disk["lead_agent_id"] == "team-lead@alpha"
    assert records.convert(on_disk, TeamConfig) == config


def test_name_clash_gets_a_unique_name() -> None:
    first = Team.create("alpha", description="one")
    second = Team.create("Alpha", description="two")
    third = Team.create("alpha")
    assert first.name == "alpha"
    names = {first.name, second.name, third.name}
    assert len(names) == 3
    for team in (second, third):
        assert team.name.startswith("alpha-") and len(team.name) == len("alpha-") + 4
        assert team.config().lead_agent_id == f"team-lead@{team.name}"
    assert Team.open("alpha").config().description == "one"  # the first is untouched
    assert second.config().description == "two"


def test_clash_on_a_63_character_name_stays_valid() -> None:
    base = "x" * 63
    Team.create(base)
    other = Team.create(base)
    assert other.name != base and len(other.name) == 63
    assert Team.open(other.name).name == other.name


def test_open_missing_team() -> None:
    with pytest.raises(NotFoundError) as info:
        Team.open("ghost")
    assert "swarm team list" in str(info.value)
    assert info.value.exit_code == 2


def test_list_teams() -> None:
    assert Team.list() == []
    for name in ("beta", "alpha", "gamma"):
        Team.create(name)
    (paths.teams_dir() / "not-a-team").mkdir()
    assert [t.name for t in Team.list()] == ["alpha", "beta", "gamma"]


# -- members ------------------------------------------------------------------------------------
def test_add_and_remove_members() -> None:
    team = Team.create("alpha")
    alice = team.add_member("alice", model="shell", agent_type="explore")
    bob = team.add_member("bob")
    assert alice.agent_id == "alice@alpha" and alice.model == "shell"
    assert alice.agent_type == "explore" and alice.joined_at.endswith("Z")
    assert alice.color and bob.color and alice.color != bob.color
    assert paths.agent_dir("alpha", "alice").is_dir()
    assert [m.name for m in team.members()] == ["team-lead", "alice", "bob"]
    with pytest.raises(BadInputError, match="already a member"):
        team.add_member("ALICE")
    team.remove_member("alice")
    assert [m.name for m in team.members()] == ["team-lead", "bob"]
    with pytest.raises(NotFoundError):
        team.remove_member("alice")
    with pytest.raises(BadInputError, match="cannot be removed"):
        team.remove_member("team-lead")


def test_update_member() -> None:
    team = Team.create("alpha")
    team.add_member("alice")
    team.update_member("alice", pane_id="%3", backend="hidden", pid=1234)
    member = Team.open("alpha").member("alice")
    assert (member.pane_id, member.backend, member.pid) == ("%3", "hidden", 1234)
    with pytest.raises(NotFoundError):
        team.update_member("nobody", pid=1)


# -- modes --------------------------------------------------------------------------------------
def test_directories_are_0700_and_files_0600() -> None:
    old = os.umask(0o022)  # the usual umask: modes must not depend on it
    try:
        team = Team.create("alpha")
        team.add_member("alice")
        [sent] = team.send("alice", "hi")
        team.inbox("alice").mark_read([sent])
        team.tasks.add("task")
        write_state("alpha", "alice", AgentState())
    finally:
        os.umask(old)
    root = paths.home()
    checked = 0
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        expected = 0o700 if path.is_dir() else 0o600
        assert mode == expected, f"{path} is {oct(mode)}"
        checked += 1
    assert checked > 12


# -- delete -------------------------------------------------------------------------------------
def test_delete_removes_the_team_directory() -> None:
    team = Team.create("alpha")
    team.add_member("alice")
    team.send("alice", "hi")
    assert Team.delete("alpha") == []
    assert not paths.team_dir("alpha").exists()
    with pytest.raises(NotFoundError):
        Team.open("alpha")
    with pytest.raises(NotFoundError):
        Team.delete("alpha")


def test_the_lead_never_counts_as_a_live_member() -> None:
    team = Team.create("alpha")
    record_process(team, "team-lead", os.getpid())
    assert Team.delete("alpha") == []


# -- corrupt team file --------------------------------------------------------------------------
def test_corrupt_team_file_fails_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    Team.create("alpha")
    config = paths.team_config("alpha")
    config.write_bytes(b'{"name": "alpha", "lead_agent')
    with pytest.raises(SwarmError) as info:
        Team.open("alpha")
    assert "corrupt" in str(info.value) and "moved aside" in str(info.value)
    err = capsys.readouterr().err
    assert err.startswith("swarm: warning:") and "config.json" in err
    [aside] = list(config.parent.glob("config.json.corrupt-*"))
    assert aside.read_bytes() == b'{"name": "alpha", "lead_agent'
    assert not config.exists()
