"""The `hidden` backend: a detached process in its own session, output to its agent.log."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from swarm import settings
from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir
from swarm.core.store.liveness import is_alive


class HiddenBackend:
    """Pane ids look like `hidden:<name>`; the process is found again through its pid."""

    type = "hidden"

    def __init__(self, team: str | None = None) -> None:
        self.team = team
        self._pids: dict[str, int] = {}
        # The started processes, for a caller that wants their exit status (tests, scripts).
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def is_available(self) -> bool:
        return True

    def is_running_inside(self) -> bool:
        return False

    def create_pane(self, name: str, color: str | None) -> str:
        return f"hidden:{name}"

    def _log_path(self, pane_id: str, env: Mapping[str, str]) -> Path:
        name = pane_id.partition(":")[2]
        team = self.team or env.get("SWARM_TEAM", "")
        return paths.agent_log(team, name)

    def run_in_pane(
        self, pane_id: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> int | None:
        log = self._log_path(pane_id, env)
        ensure_dir(log.parent)
        if settings.forkserver():
            from swarm.backends.forkserver import fork_from_server

            pid = fork_from_server(argv, env, cwd, log)
            if pid is not None:
                self._pids[pane_id] = pid
                return pid
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            proc = subprocess.Popen(  # noqa: S603 - argv is built by swarm, not a shell string
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=fd,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own session: no SIGHUP/SIGINT from the spawning shell
                close_fds=True,
            )
        finally:
            os.close(fd)
        self._pids[pane_id] = proc.pid
        self.processes[pane_id] = proc
        return proc.pid

    def kill_pane(self, pane_id: str) -> bool:

        pid = self._pids.pop(pane_id, None)
        if pid is None or not is_alive(pid):
            return False
        os.kill(pid, signal.SIGTERM)
        return True

    def is_pane_alive(self, pane_id: str) -> bool:

        pid = self._pids.get(pane_id)
        return pid is not None and is_alive(pid)

    def close_team(self) -> int:
        """No panes: the team's processes are stopped member by member."""
        return 0


def swarm_argv() -> list[str]:
    """How to start `swarm` itself in a child: the installed script, else `python -m swarm`."""

    exe = shutil.which("swarm", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "swarm"]

