"""Every test gets its own SWARM_HOME, its own tmux server and a clean environment: no network,
no user data, nothing shared with the tests running beside it (`make test` runs them in
parallel with pytest-xdist)."""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.team.team import Team

# PYTHONDONTWRITEBYTECODE (set on the CI and dev machines) also stops pytest from caching the
# test modules it rewrites for assert introspection: every xdist worker would rewrite all of
# them again at each start (about 8 s of CPU per worker). The modules imported from here on
# (the fixture plugins, every test module) keep their rewritten bytecode in __pycache__, which
# pytest checks against the source; processes the tests start still inherit the variable.
sys.dont_write_bytecode = False

# Every model provider's variables (the machine's own must never reach a test).
PROVIDER_VARIABLES = ("ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST",
                      "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID",
                      "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                      "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL", "CLOUD_ML_REGION",
                      "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_APPLICATION_CREDENTIALS",
                      "ANTHROPIC_VERTEX_BASE_URL", "SWARM_MODEL")

# Shared fixtures: `crew` (real teammates on the hidden backend) and `fake_api` (the fake
# Anthropic Messages API).
pytest_plugins = ["tests.agent_fixtures", "tests.fake_anthropic", "tests.fake_openai",
                  "tests.rule_helpers",
                  "tests.lead_fixtures", "tests.redis_server", "tests.sshd_fixtures"]


@pytest.fixture(autouse=True, scope="session")
def sigint_raises() -> None:
    """A suite started in the background (`cmd &`, nohup) inherits SIGINT ignored, and Python
    then never raises KeyboardInterrupt, here or in the processes the tests start: the tests of
    interrupts need it to behave as at a terminal."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_sockets = itertools.count()


def tmux_socket_path(name: str) -> Path:
    """Where tmux keeps the socket of `tmux -L name`."""
    return Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.geteuid()}" / name


@pytest.fixture(autouse=True)
def swarm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "swarm-home"
    monkeypatch.setenv("SWARM_HOME", str(home))
    for var in ("SWARM_STORE", "SWARM_TEAM", "SWARM_AGENT_ID", "SWARM_MODEL", "SWARM_BACKEND",
                "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "TMUX", "TMUX_PANE", "SWARM_DEBUG",
                "SWARM_TRUST_PROJECT", "SWARM_SECRET_VARS", "SWARM_MAX_TEAMMATES", "SWARM_FORKSERVER", *PROVIDER_VARIABLES,
                "SWARM_POLICY_DIR", "SWARM_TMUX_LAYOUT",
                # pytest-xdist's workers are started with COLUMNS=80: the CLI would fit its
                # tables to it (a test that wants a width sets it)
                "COLUMNS", "LINES"):
        monkeypatch.delenv(var, raising=False)
    # A teammate that lands on tmux (the auto backend, outside tmux) gets a server of its own
    # test, never the developer's nor a parallel test's (both would have a `swarm-alpha`).
    socket = f"swarm-test-{os.getpid()}-{next(_sockets)}"
    monkeypatch.setenv("SWARM_TMUX_SOCKET", socket)
    yield home
    if tmux_socket_path(socket).exists():
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=30)
        tmux_socket_path(socket).unlink(missing_ok=True)


@pytest.fixture
def trust_projects(monkeypatch: pytest.MonkeyPatch) -> None:
    """Project configuration is used (SWARM_TRUST_PROJECT=1, inherited by the processes a test
    starts): for tests of what a project's hooks, servers and definitions do, not of trust."""
    monkeypatch.setenv("SWARM_TRUST_PROJECT", "1")


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
SLOW_FIXTURES = frozenset({"crew", "server", "session", "ssh_host"})


def pytest_collection(session: pytest.Session) -> None:
    # What collection imports (swarm, the SDKs, pytest's own) lives as long as the worker:
    # imported without the collector's passes, then frozen (as swarm.big_import does).
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
    gc.enable()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items[:] = slow_first_in_each_share(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", 1)))


# The modules whose tests take longest (10-50 s each on 2 cores), longest first: dealt out
# before the other slow tests.
LONGEST = ("tests/test_quickstart.py::", "tests/test_ssh_teams.py::", "tests/test_wheel.py::",
           "tests/test_lead.py::", "tests/test_workspace_trust.py::")


def slow_first_in_each_share(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """`--dist worksteal` first hands each worker one contiguous share of the collection, and an
    idle worker steals the tail of the longest queue. In collection order the slow tests
    bunch up (test_quickstart, test_ssh_*, test_wheel...) and one can start last, making the
    run's tail. Dealt round-robin, slow tests first, every share starts with its part of the
    slow tests and ends with quick ones: what is stolen and what runs last is short. The order
    is the same in every worker (xdist requires it); without xdist it is collection order."""
    if workers < 2:
        return items

    def rank(item: pytest.Item) -> int:
        for place, module in enumerate(LONGEST):
            if item.nodeid.startswith(module):
                return place
        return len(LONGEST) + (0 if item.get_closest_marker("slow") else 1)

    ordered = sorted(items, key=rank)  # stable: collection order within a rank
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for index, item in enumerate(ordered):
        shares[index % workers].append(item)
    # worksteal's first split: len(pending) // workers for the first share, and so on; the
    # round-robin shares differ by at most one test, so the boundaries move by one at most.
    return [item for share in shares for item in share]
