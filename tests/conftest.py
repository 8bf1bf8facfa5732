"""The suite's plugin (tests/support/pytest_plugin.py: a private SWARM_HOME, tmux server and
environment for every test, the shared fixtures) and how the collection is ordered."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

# PYTHONDONTWRITEBYTECODE (set on the CI and dev machines) also stops pytest from caching the
# test modules it rewrites for assert introspection: every xdist worker would rewrite all of
# them again at each start (about 8 s of CPU per worker). The modules imported from here on
# (the fixture plugin, every test module) keep their rewritten bytecode in __pycache__, which
# pytest checks against the source; processes the tests start still inherit the variable.
sys.dont_write_bytecode = False

# pytester: pytest's own fixture for a test run inside a test (tests/unit/test_process_guard.py)
pytest_plugins = ["tests.support.pytest_plugin", "pytester"]


# Where a test lives says what it starts (docs/design/tests.md): tests/unit/ runs in this
# process; tests/system/ starts processes (swarm agents, tmux, redis-server, sshd) and
# tests/agents/ drives the real agent CLIs, and both are `slow` by folder (`pytest -m "not
# slow"` runs the in-process half in well under a minute).
TESTS = Path(__file__).resolve().parent
SLOW_FOLDERS = (TESTS / "system", TESTS / "agents")


def pytest_collection(session: pytest.Session) -> None:
    # What collection imports (swarm, the SDKs, pytest's own) lives as long as the worker:
    # imported without the collector's passes, then frozen (as swarm.big_import does).
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
    gc.enable()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(folder in item.path.parents for folder in SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
    items[:] = slow_first_in_each_share(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", 1)))


# The modules whose tests take longest (10-50 s each on 2 cores), longest first: dealt out
# before the other slow tests.
LONGEST = ("tests/system/cli/test_quickstart.py::", "tests/system/ssh/test_ssh_teams.py::",
           "tests/system/cli/test_wheel.py::", "tests/system/lead/test_headless.py::",
           "tests/system/teammate/test_workspace.py::")


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
