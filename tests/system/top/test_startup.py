"""`swarm top` brings Textual, and only it does: every other command starts as before (a fresh
interpreter runs the real `main` and reports the modules it loaded), and `top --once`/`--json`
draw no screen, so they load no Textual either."""

from __future__ import annotations

import os

import pytest

from swarm.core.records.state import AgentState
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from tests.unit.test_startup import loaded, under

SCREEN = ("textual", "swarm.cli.top", "swarm.cli.top_app", "swarm.cli.top_screens")


@pytest.fixture
def live(team: Team) -> Team:
    me = os.getpid()
    write_state("alpha", "alice", AgentState(state="idle", pid=me,
                                             started_at=process_start_time(me)))
    return team


def test_status_send_tasks_and_help_never_load_textual_or_the_dashboard(live: Team) -> None:
    for argv in (["status", "--team", "alpha"], ["send", "alice", "hi", "--team", "alpha"],
                 ["tasks", "list", "--team", "alpha"], ["--help"]):
        modules, _ = loaded(*argv)
        assert not under(modules, *SCREEN), (argv, sorted(under(modules, *SCREEN)))


def test_top_once_and_json_print_without_loading_textual(live: Team) -> None:
    for argv in (["top", "--team", "alpha", "--once"], ["top", "--team", "alpha", "--json"]):
        modules, _ = loaded(*argv)
        assert "swarm.cli.top" in modules  # the command ran
        assert not under(modules, "textual", "swarm.cli.top_app"), argv
