"""Test helpers: polling with a deadline instead of sleeping."""

from __future__ import annotations

import contextlib
import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psutil
import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.runtime.models.base import ModelReply, ModelRequest

T = TypeVar("T")


def wait_until(predicate: Callable[[], T | None], timeout: float = 10.0, interval: float = 0.02,
               message: str = "") -> T:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message or predicate}")
        time.sleep(interval)


def process_gone(proc: psutil.Process | int) -> bool:
    """True once a process has exited: reaped, or a zombie its parent has not reaped yet. It can
    be reaped between any two looks, so one that vanishes while we look is gone, not an error."""
    try:
        found = proc if isinstance(proc, psutil.Process) else psutil.Process(proc)
        return not found.is_running() or found.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def children_with(proc: psutil.Process | int, argv: Callable[[list[str]], bool],
                  recursive: bool = True) -> list[psutil.Process]:
    """The children of `proc` whose command line `argv` accepts. A child can end between the
    listing and the look at its command line, and the parent too: those are left out."""
    found = []
    with contextlib.suppress(psutil.NoSuchProcess):
        parent = proc if isinstance(proc, psutil.Process) else psutil.Process(proc)
        for child in parent.children(recursive=recursive):
            with contextlib.suppress(psutil.NoSuchProcess, psutil.ZombieProcess):
                if argv(child.cmdline()):
                    found.append(child)
    return found


def child_named(pid: int, name: str, timeout: float = 10.0, message: str = "") -> psutil.Process:
    """The first descendant of `pid` called `name` (e.g. the `sleep` an agent's Bash tool runs);
    fails the test if none appears within `timeout`."""
    parent = psutil.Process(pid)

    def find() -> psutil.Process | None:
        for child in parent.children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                if child.name() == name:
                    return child
        return None

    found = wait_until(find, timeout, message=message or f"a {name} under {pid}")
    assert found is not None
    return found


def turn_over(team: str, name: str) -> bool:
    """Idle with nothing unread: its turn is over. (A teammate is idle for a moment as it
    starts, before it reads the prompt it was spawned with: `state == "idle"` is not enough.)"""
    state = read_state(team, name)
    return (state is not None and state.state == "idle"
            and not Team(team).inbox(name, checked=False).unread())


def command_group_recorded(team: str, name: str, command: psutil.Process,
                           timeout: float = 15.0) -> int:
    """Wait until `name` has recorded the process group its Bash `command` runs in, and return
    it. An agent records it just after the command starts: one killed before that leaves the
    command running, as nobody knows its group (a race of a test that kills at once)."""
    group = os.getpgid(command.pid)
    wait_until(lambda: (s := read_state(team, name)) is not None and s.child_pgid == group,
               timeout, message=f"{name}'s record of its command group {group}")
    return group


def without_usage(text: str) -> str:
    """A `<subagent-notification>` without its agent_type, usage, duration_s and recent
    attributes (tests that check the report itself; others check those attributes)."""
    import re

    return re.sub(r' (agent_type|usage|duration_s|recent)="[^"]*"', "", text)


class OneCall:
    """A model that makes the given tool calls once, then ends its turn saying "ok"."""

    name = "one-call"

    def __init__(self, uses: list[dict[str, Any]]) -> None:
        self.uses = uses

    def complete(self, request: ModelRequest) -> ModelReply:
        if request.messages[-1]["content"][0].get("type") == "tool_result":
            return ModelReply([{"type": "text", "text": "ok"}])
        return ModelReply(self.uses, "tool_use")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`swarm ARGS...` in-process through `main` (errors mapped to lines and exit codes):
    (exit code, stdout, stderr)."""
    from swarm.cli.main import main

    capsys.readouterr()
    code = 0
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def started_with(pid: int, name: str) -> bytes | None:
    """The value variable `name` had in the environment process `pid` was started with, as
    /proc/PID/environ shows it now (a `swarm agent` zeroes its secrets there: a value of NULs
    as long as the secret says it arrived); None when it had none or cannot be read."""
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for start in (i for i in range(len(data)) if data.startswith(prefix, i)
                  and (i == 0 or data[i - 1] == 0)):
        value = data[start + len(prefix):]
        zeros = len(value) - len(value.lstrip(b"\0"))  # a zeroed value and its terminator
        return b"\0" * (zeros - 1) if zeros else value.split(b"\0", 1)[0]
    return None


BREAKOUT = '#"><!--'


def one_error(err: str, *needles: str) -> str:
    """The one `swarm: error: ...` line of `err` (blank lines aside), holding every needle."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("swarm: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


CaptureFixture = pytest.CaptureFixture[str]


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


SCRIPT_FAILED = 100  # the exit code of an `as_script` script when a step fails


def as_script(steps: list[str]) -> str:
    """One bash script running `steps` in order (so `export` carries over, as in a terminal),
    stopping at the first that exits non-zero and saying which."""
    out = []
    for number, step in enumerate(steps, 1):
        said = shlex.quote(f"{number}: {step.splitlines()[0]}")
        out += [f"printf '\\n>>> %s\\n' {said}", step, "rc=$?",
                f"if [ $rc -ne 0 ]; then printf 'FAILED (exit %s) %s\\n' $rc {said} >&2;"
                f" exit {SCRIPT_FAILED}; fi"]
    return "\n".join(out) + "\n"
