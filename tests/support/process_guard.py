"""The rule of docs/design/tests.md, enforced: tests/unit/ is in-process, and a test there that
starts a process fails with one line naming what it started. One audit hook, installed once,
sees every process this Python starts (subprocess, os.posix_spawn, os.exec*, os.fork,
os.system, pty.spawn; asyncio's subprocesses go through subprocess) and, while a test under
tests/unit/ runs its setup, call or teardown, notes the executable's name; the phase then
fails. A quick `git`, `bash` or `sh` does not count (ALLOWED).

What the hook cannot see: what an allowed shell starts in turn (`bash -c "sleep 9"`), and
multiprocessing's "spawn" and "forkserver" contexts (they start their interpreter without an
audit event; its "fork" context raises os.fork)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

# Executables a unit test may start: the quick commands the rule names (`sh` is the shell of
# subprocess's shell=True and of os.system, a quick shell as bash is).
ALLOWED = frozenset({"git", "bash", "sh"})

# The audit events (Python 3.11's table) by which a process is started. os.spawn* and
# multiprocessing's "fork" context raise os.fork; subprocess raises subprocess.Popen and, on
# its posix_spawn path, os.posix_spawn as well (one name, counted once).
PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork",
                            "os.forkpty", "os.system", "os.spawn", "pty.spawn"})

def executable(event: str, args: tuple[Any, ...]) -> str:
    """The name of what `event` starts: the executable's base name, the first word of an
    os.system command, or a fork of this process."""
    if event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
        program = args[0]
    elif event == "os.spawn":
        program = args[1]
    elif event == "pty.spawn":
        argv = args[0]
        program = argv if isinstance(argv, str | bytes) else argv[0]
    elif event == "os.system":
        words = shlex.split(os.fsdecode(args[0]))
        program = words[0] if words else "sh"
    else:
        return f"a fork of the test's process ({event})"
    return os.path.basename(os.fsdecode(program))


class ProcessRecorder:
    """One pytest session's record: the names started by the test phase under way, if that
    test is under tests/unit/ (of this session's rootdir)."""

    def __init__(self, config: pytest.Config) -> None:
        self.unit = config.rootpath / "tests" / "unit"
        self.pid = os.getpid()
        self.recording = False
        self.started: set[str] = set()

    def record(self, event: str, args: tuple[Any, ...]) -> None:
        # a forked child runs this hook too: its exec is its parent's fork, already noted
        if self.recording and os.getpid() == self.pid:
            name = executable(event, args)
            if name not in ALLOWED:
                self.started.add(name)

    def watches(self, path: Path) -> bool:
        return self.unit in path.parents


# The innermost pytest session records (a pytester run inside a test has its own, and the test
# that runs it is not blamed for what the inner tests start).
_recorders: list[ProcessRecorder] = []
_hook_installed = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in PROCESS_EVENTS and _recorders:
        _recorders[-1].record(event, args)


RECORDER = pytest.StashKey[ProcessRecorder]()


def pytest_configure(config: pytest.Config) -> None:
    global _hook_installed
    if not _hook_installed:  # an audit hook cannot be removed: one for the process
        sys.addaudithook(_audit)
        _hook_installed = True
    recorder = ProcessRecorder(config)
    config.stash[RECORDER] = recorder
    _recorders.append(recorder)


def pytest_unconfigure(config: pytest.Config) -> None:
    _recorders.remove(config.stash[RECORDER])


def refusal(started: set[str]) -> str:
    return (f"tests/unit is in-process: a test that starts {', '.join(sorted(started))} goes to "
            "tests/system/<area>/ (docs/design/tests.md)")


def _guarded(item: pytest.Item) -> Generator[None, None, None]:
    """One phase of a test (setup, call or teardown): under tests/unit/, what it starts beyond
    ALLOWED fails it, even if the test caught the failure of what it started."""
    recorder = item.config.stash[RECORDER]
    if not recorder.watches(item.path):
        yield
        return
    recorder.started = set()
    recorder.recording = True
    try:
        yield
    finally:
        recorder.recording = False
        if recorder.started:  # the rule's line stands in for the test's own outcome
            pytest.fail(refusal(recorder.started), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    return (yield from _guarded(item))
