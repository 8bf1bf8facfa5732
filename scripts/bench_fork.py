"""The preloaded-parent experiment (issue 37 part 2): teammates forked from a parent that has
imported the runtime and the anthropic SDK once, so their pages are shared copy-on-write.

Not a swarm backend: measured here and dropped (docs/PERFORMANCE.md says why). The parent (a
"zygote", `python scripts/bench_fork.py --serve`) reads one JSON request a line on stdin (argv,
env, cwd, log), forks, and writes the child's pid; the child becomes what the hidden backend
starts: its own session, output to its agent.log, the member's environment and directory, then
`swarm agent --agent-id ID` in-process. `ForkBackend` is the hidden backend with its processes
coming from the zygote; the bench spawns through swarm.ops.spawner with it.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from swarm.backends.hidden import HiddenBackend  # noqa: E402


def serve(freeze: bool) -> None:
    """The zygote: preload, then fork a teammate per request line until stdin closes."""
    import swarm.cli.main  # noqa: F401 - preloaded to be shared
    import swarm.runtime.agent  # noqa: F401
    from swarm.big_import import big_import

    with big_import():
        import anthropic  # noqa: F401
    if freeze:
        gc.freeze()  # big_import froze what existed then; this, the rest
    out = sys.stdout
    print("ready", file=out, flush=True)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], 1.0)
        while True:  # reap: the zygote is the teammates' parent
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not ready:
            continue
        line = sys.stdin.readline()
        if not line:
            return
        pid = os.fork()
        if pid == 0:
            _child(json.loads(line))
        print(pid, file=out, flush=True)


def _child(request: dict[str, object]) -> None:
    """In the fork: become what HiddenBackend.run_in_pane starts, then run the command."""
    code = 1
    try:
        os.setsid()
        fd = os.open(str(request["log"]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.chdir(str(request["cwd"]))
        env = request["env"]
        assert isinstance(env, dict)
        os.environ.clear()
        os.environ.update(env)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own descriptors
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        argv = request["argv"]
        assert isinstance(argv, list)
        _set_cmdline(argv)
        from swarm.cli.agent import agent

        code = 0
        agent.main(args=argv[argv.index("agent") + 1:], prog_name="swarm agent",
                   standalone_mode=False)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the child must never return into the zygote's loop
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        os._exit(code)


def _set_cmdline(argv: list[str]) -> None:
    """Show the command the child runs in /proc/PID/cmdline, not the zygote's: core.liveness's
    agent_ancestor reads it to know a teammate's commands. The kernel's argument area is
    rewritten in place (as setproctitle does); the zygote's own argv is padded to leave room."""
    import ctypes

    with open("/proc/self/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rfind(b")") + 2:].split()
    start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (proc(5) fields 48, 49)
    data = b"\0".join(os.fsencode(a) for a in argv) + b"\0"
    if len(data) > end - start:
        raise SystemExit("the zygote's argument area is too small for this command line")
    ctypes.memmove(start, data.ljust(end - start, b"\0"), end - start)


class Zygote:
    def __init__(self, python: str, freeze: bool = True) -> None:
        args = [python, str(Path(__file__).resolve()), "--serve", "-" * 1024]  # room: _set_cmdline
        args += [] if freeze else ["--no-freeze"]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, start_new_session=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit("the zygote did not start")

    def fork(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, log: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": list(argv), "env": dict(env), "cwd": cwd,
                                          "log": str(log)}) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


class ForkBackend(HiddenBackend):
    """The hidden backend, its processes forked by the zygote."""

    def __init__(self, team: str, zygote: Zygote) -> None:
        super().__init__(team)
        self.zygote = zygote

    def run_in_pane(self, pane_id: str, argv: Sequence[str], env: Mapping[str, str],
                    cwd: str) -> int | None:
        log = self._log_path(pane_id, env)
        log.parent.mkdir(parents=True, exist_ok=True)
        pid = self.zygote.fork(argv, env, cwd, log)
        self._pids[pane_id] = pid
        return pid


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve(freeze="--no-freeze" not in sys.argv)
