"""Name validation (docs/design/decisions.md): rejected, never rewritten, via the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.records.names import (
    agent_id,
    parse_agent_id,
    validate_agent_name,
    validate_color,
    validate_team_name,
)
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.errors import BadInputError, InvalidNameError
from tests.support.helpers import BREAKOUT

# Every kind of bad name, plus a few neighbours of the 63-character limit.
INVALID_NAMES = [
    pytest.param("../x", id="dotdot"),
    pytest.param("..", id="dotdot-only"),
    pytest.param("a/b", id="slash"),
    pytest.param("", id="empty"),
    pytest.param("a b", id="space"),
    pytest.param(" a", id="leading-space"),
    pytest.param("a@b", id="at"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\x1b[31m", id="escape"),
    pytest.param("a\tb", id="tab"),
    pytest.param("a" * 100, id="100-chars"),
    pytest.param("a" * 64, id="64-chars"),
    pytest.param("-a", id="leading-dash"),
    pytest.param("_a", id="leading-underscore"),
    pytest.param("a.b", id="dot"),
    pytest.param("é", id="non-ascii"),
]


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_invalid_team_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        validate_team_name(name)
    assert "team name" in str(info.value)
    assert "\n" not in str(info.value)  # one line, even for names with control characters


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_invalid_agent_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        validate_agent_name(name)
    assert "agent name" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_team_create_with_invalid_name_creates_nothing(name: str) -> None:
    with pytest.raises(InvalidNameError):
        Team.create(name)
    teams = paths.teams_dir()
    assert not teams.exists() or list(teams.iterdir()) == []


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_team_open_with_invalid_name(name: str) -> None:
    with pytest.raises(InvalidNameError):
        Team.open(name)


@pytest.mark.parametrize("name", INVALID_NAMES)
def test_add_member_with_invalid_name_changes_nothing(name: str) -> None:
    team = Team.create("alpha")
    before = Path(team.document()).read_bytes()
    with pytest.raises(InvalidNameError):
        team.add_member(name)
    assert Path(team.document()).read_bytes() == before
    assert not (team.dir / "agents").exists()


def test_invalid_name_error_is_bad_input() -> None:
    with pytest.raises(BadInputError) as info:
        validate_team_name("a/b")
    assert info.value.exit_code == 2


def test_long_names_are_shortened_in_the_message() -> None:
    with pytest.raises(InvalidNameError) as info:
        validate_team_name("x" * 500)
    assert len(str(info.value)) < 250


@pytest.mark.parametrize("name", ["team-lead", "user", "system", "*", "TEAM-LEAD", "User"])
def test_reserved_agent_names(name: str) -> None:
    with pytest.raises(InvalidNameError):
        validate_agent_name(name)
    team = Team.create("alpha")
    with pytest.raises(InvalidNameError):
        team.add_member(name)
    assert [m.name for m in team.members()] == ["team-lead"]


def test_reserved_names_are_fine_as_team_names() -> None:
    # Reserved words only matter for agents; a team may be called "user".
    assert Team.create("user").name == "user"


@pytest.mark.parametrize(
    ("given", "expected"),
    [("Alpha", "alpha"), ("ALPHA-1", "alpha-1"), ("a_B-c", "a_b-c"), ("Z" * 63, "z" * 63)],
)
def test_upper_case_is_lower_cased(given: str, expected: str) -> None:
    assert validate_team_name(given) == expected
    assert validate_agent_name(given) == expected


def test_upper_case_team_and_member_via_api() -> None:
    team = Team.create("Alpha")
    assert team.name == "alpha"
    assert Team.open("ALPHA").name == "alpha"
    member = team.add_member("Alice")
    assert member.name == "alice"
    assert member.agent_id == "alice@alpha"
    assert team.member("ALICE").name == "alice"


@pytest.mark.parametrize("name", ["a", "0", "a" * 63, "a-b_c", "9lives"])
def test_valid_names_pass_unchanged(name: str) -> None:
    assert validate_team_name(name) == name
    assert validate_agent_name(name) == name


def test_agent_ids() -> None:
    assert agent_id("alice", "alpha") == "alice@alpha"
    assert parse_agent_id("Alice@Alpha") == ("alice", "alpha")
    assert parse_agent_id("team-lead@alpha") == ("team-lead", "alpha")
    for bad in ["alice", "alice@", "@alpha", "a/b@alpha", "alice@../x"]:
        with pytest.raises(InvalidNameError):
            parse_agent_id(bad)


# -- colours ------------------------------------------------------------------------------------
def test_a_colour_is_a_palette_name_or_rrggbb() -> None:
    assert validate_color("blue") == "blue"
    assert validate_color("Bright_Green") == "bright_green"
    assert validate_color("#12AB9f") == "#12ab9f"
    assert validate_color("purple") == "magenta"  # Claude Code's agent colours are read too
    for bad in (BREAKOUT, "", "#12ab9", "#12ab9fz", "red;x", "javascript:", "#fff"):
        with pytest.raises(BadInputError, match="colou?r"):
            validate_color(bad)

