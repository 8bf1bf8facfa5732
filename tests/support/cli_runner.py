"""`run_swarm`: a `swarm` command as the tests run it, a real process forked from a preloaded one.

A command is its own process, as `subprocess.run([swarm, ...])` makes it: its own pid, working
directory, environment, stdio (stdin /dev/null, stdout and stderr captured), exit code, and
the processes it starts outlive it. But it is forked from one interpreter per pytest worker
(multiprocessing's forkserver) that imported the CLI once, instead of starting Python and
importing the CLI again: that start is most of a short command's CPU, and the suite runs about
a thousand of them (docs/PERFORMANCE.md). Tests about the executable itself (its entry point,
its start, what it imports) start it with subprocess. So does a command whose environment sets
Python's own start up otherwise (PYTHONPATH, a `sitecustomize` on it registering a plugin).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

SWARM = str(Path(sys.executable).with_name("swarm"))

# The forkserver imports these once; every command's process starts from that copy.
PRELOAD = ["swarm.cli.main", __name__]

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(PRELOAD)


def _python_variables(environment: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environment.items() if k.startswith("PYTHON")}


# Python's variables as this worker started (the forkserver, started later, must see these).
_STARTED_WITH = _python_variables(os.environ)


def _command(argv: list[str], env: dict[str, str], cwd: str, out: str, err: str) -> None:
    """The command's process, just forked: made what an exec of `swarm` would have made."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for path, fd in ((out, 1), (err, 2)):
        opened = os.open(path, os.O_WRONLY)
        os.dup2(opened, fd)
        os.close(opened)
    # A fresh interpreter takes SIGINT as KeyboardInterrupt (the forkserver ignores it).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = argv
    from swarm.cli.main import run

    run()  # exits: multiprocessing ends the process with SystemExit's code, as Python would


def run_swarm(*args: str, timeout: float = 30.0, env: dict[str, str] | None = None,
              cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in its own process (it inherits SWARM_HOME/SWARM_TEAM from os.environ);
    on `timeout` it is killed and subprocess.TimeoutExpired raised, as subprocess.run does."""
    argv = [SWARM, *args]
    environment = {**os.environ, **(env or {})}
    where = str(cwd) if cwd is not None else os.getcwd()
    if not _python_variables(environment) == _python_variables(os.environ) == _STARTED_WITH:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env=environment, cwd=where)
    # The process guard of tests/unit sees what subprocess would have told it.
    sys.audit("subprocess.Popen", SWARM, argv, where, environment)
    with tempfile.NamedTemporaryFile() as out, tempfile.NamedTemporaryFile() as err:
        process = _context.Process(target=_command, args=(argv, environment, where, out.name,
                                                          err.name))
        process.start()
        process.join(timeout)
        timed_out = process.exitcode is None
        if timed_out:
            process.kill()
            process.join()
        stdout, stderr = (Path(f.name).read_text() for f in (out, err))
    code = process.exitcode
    process.close()
    if timed_out:
        raise subprocess.TimeoutExpired(argv, timeout, output=stdout, stderr=stderr)
    assert code is not None
    return subprocess.CompletedProcess(argv, code, stdout, stderr)
