"""Start-up is a feature: each command imports what it uses and builds the models it needs.

A fresh interpreter runs the real `main` and reports what it loaded (what needs no fresh
interpreter: tests/unit/test_startup.py)."""

from __future__ import annotations

import os

import pytest

from swarm.core.records.state import AgentState
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from tests.unit.test_startup import SDKS, loaded, probe, under


def test_a_command_module_imports_with_the_collector_paused_then_frozen(live: Team) -> None:
    found = probe("tasks", "list", "--team", live.name)
    assert found["frozen"] > 1000 and found["collector_on"]  # frozen, and the collector back on


def test_help_and_version_load_no_command_module_and_no_pydantic() -> None:
    for argv in (["--help"], ["-V"], ["tasks", "--help"]):
        modules, built = loaded(*argv)
        commands = under(modules, "swarm.cli.") - {"swarm.cli.main", "swarm.cli.helptext"}
        # A command module loaded comes with the table a teammate is checked against.
        assert commands <= ({"swarm.cli.tasks", "swarm.cli.common", "swarm.cli.completion",
                             "swarm.cli.authority", "swarm.cli.caller"}
                            if "tasks" in argv else set()), commands
        assert "swarm.runtime.teammate.agent" not in modules and not under(modules, *SDKS)
        if argv != ["tasks", "--help"]:
            assert "pydantic" not in modules and built == set()


@pytest.fixture
def live(team: Team) -> Team:
    """alice is idle in a live process (this test's), as a teammate waiting for work is."""
    me = os.getpid()
    write_state("alpha", "alice", AgentState(state="idle", pid=me, started_at=process_start_time(me)))
    team.tasks.add("one")
    return team


def test_send_loads_the_core_only_and_no_pydantic(live: Team) -> None:
    modules, _ = loaded("send", "alice", "hi", "--team", "alpha")
    assert not under(modules, "swarm.runtime", "swarm.lead", "backends", *SDKS)
    assert under(modules, "swarm.ops") <= {"swarm.ops", "swarm.ops.mail", "swarm.ops.mail.messages"}
    assert "swarm.core.team.worktrees" not in modules and "swarm.core.agents.definitions" not in modules
    # The team file, the message and the recipient's state are msgspec records (core.records).
    assert "msgspec" in modules and not under(modules, "pydantic", "pydantic_core")


def test_status_and_tasks_load_no_runtime_and_no_pydantic(live: Team) -> None:
    for argv in (["status", "--team", "alpha"], ["tasks", "list", "--team", "alpha"],
                 ["team", "list"]):
        modules, _ = loaded(*argv)
        assert not under(modules, "swarm.runtime", "swarm.lead", *SDKS), argv
        assert not under(modules, "pydantic", "pydantic_core"), argv
        assert "psutil" not in modules, argv  # liveness reads /proc (alice's pid is live)
