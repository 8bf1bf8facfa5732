"""The suite's pytest plugin (tests/conftest.py names it, as libtmux ships `libtmux.pytest_plugin`):
every test gets its own SWARM_HOME, its own tmux server and a clean environment (no network, no
user data, nothing shared with the tests running beside it under pytest-xdist), and the shared
fixtures of the support modules are registered here by importing them."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.team.team import Team
from tests.support.agent_fixtures import crew_fixture
from tests.support.fake_anthropic import fake_api
from tests.support.fake_openai import fake_openai
from tests.support.lead_fixtures import lead_env
from tests.support.process_guard import (
    pytest_configure,
    pytest_runtest_call,
    pytest_runtest_setup,
    pytest_runtest_teardown,
    pytest_unconfigure,
)
from tests.support.redis_server import redis_server, redis_url, store
from tests.support.rule_helpers import cwd
from tests.support.sshd_fixtures import ssh_host

# The fixtures this plugin registers from the support modules (`crew`: real teammates on the
# hidden backend; `fake_api`: the fake Anthropic Messages API; ...).
SHARED_FIXTURES = (crew_fixture, fake_api, fake_openai, lead_env, redis_server, redis_url, store,
                   cwd, ssh_host)
# The hooks that fail a test under tests/unit/ that starts a process
# (tests/support/process_guard.py).
PROCESS_GUARD_HOOKS = (pytest_configure, pytest_unconfigure, pytest_runtest_setup,
                       pytest_runtest_call, pytest_runtest_teardown)

# Every model provider's variables (the machine's own must never reach a test).
PROVIDER_VARIABLES = ("ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST",
                      "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID",
                      "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                      "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_BEDROCK_BASE_URL", "CLOUD_ML_REGION",
                      "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_APPLICATION_CREDENTIALS",
                      "ANTHROPIC_VERTEX_BASE_URL", "SWARM_MODEL")

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
