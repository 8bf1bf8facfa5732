"""Every test gets its own SWARM_HOME and a clean environment: no network, no user data."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.team import Team

# Shared fixtures: `crew` (real teammates on the hidden backend) and `fake_api` (the fake
# Anthropic Messages API).
pytest_plugins = ["tests.agent_fixtures", "tests.fake_anthropic", "tests.lead_fixtures"]


@pytest.fixture(autouse=True, scope="session")
def sigint_raises() -> None:
    """A suite started in the background (`cmd &`, nohup) inherits SIGINT ignored, and Python
    then never raises KeyboardInterrupt, here or in the processes the tests start: the tests of
    interrupts need it to behave as at a terminal."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def swarm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "swarm-home"
    monkeypatch.setenv("SWARM_HOME", str(home))
    for var in ("SWARM_TEAM", "SWARM_AGENT_ID", "SWARM_MODEL", "SWARM_BACKEND",
                "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "TMUX", "TMUX_PANE", "SWARM_DEBUG",
                "COLUMNS"):  # an exported $COLUMNS would cut the tables tests read
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def team() -> Team:
    """Team `alpha` with members alice and bob (and its lead)."""
    team = Team.create("alpha")
    team.add_member("alice")
    team.add_member("bob")
    return team


@pytest.fixture
def strays() -> Iterator[list[psutil.Process]]:
    """Processes a test orphans (a killed agent's Bash child runs in its own session)."""
    procs: list[psutil.Process] = []
    yield procs
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(procs, timeout=5)


# Tests that start real agent processes or a tmux server are `slow` (others that start the swarm
# executable or take about a second are marked by hand): `pytest -m "not slow"` runs
# the fast half in well under a minute.
SLOW_FIXTURES = frozenset({"crew", "server", "session"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
