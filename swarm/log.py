"""Logging: one logger per module (`logging.getLogger(__name__)`), configured once per process.

Commands log warnings to stderr; a teammate also logs to its agent.log. `SWARM_DEBUG=1` turns on
debug lines in both.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from swarm import settings

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(log_file: Path | None = None, verbose: bool = False) -> None:
    """Set up the `swarm` logger for this process (idempotent)."""
    root = logging.getLogger("swarm")
    if getattr(root, "_swarm_configured", False):
        return
    debug = verbose or settings.debug()
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    # A teammate's warnings go to its log; stderr too only when debugging (and when stderr is not
    # that log already, as it is for hidden teammates).
    if log_file is None or (debug and not _is_stderr(log_file)):
        stderr = logging.StreamHandler()
        stderr.setLevel(logging.DEBUG if debug else logging.WARNING)
        stderr.setFormatter(logging.Formatter("swarm: %(levelname)s: %(name)s: %(message)s"))
        root.addHandler(stderr)
    if log_file is not None:
        # 0600 like every file swarm writes: the log may quote commands and their output.
        fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
        handler.setLevel(logging.DEBUG if debug else logging.INFO)
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
    root.propagate = False
    root._swarm_configured = True  # type: ignore[attr-defined]


def _is_stderr(path: Path) -> bool:
    try:
        return os.path.samefile("/proc/self/fd/2", path)
    except OSError:
        return False
