"""Logging: one logger per module (`logging.getLogger(__name__)`), configured once per process.

A teammate logs to its agent.log. `SWARM_DEBUG=1` (or `swarm --verbose`) adds debug lines there
and on stderr. Every line is redacted (core.trust.secrets): a logged error never shows a secret.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from swarm import settings

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFormatter(logging.Formatter):
    """A formatter whose lines (message and traceback) pass through core.trust.secrets.redact."""

    def format(self, record: logging.LogRecord) -> str:
        # Imported at the first line logged, not at start-up: its patterns cost ~1 ms to
        # compile, and most CLI commands never log a line.
        from swarm.core.trust.secrets import redact

        return redact(super().format(record))


def configure(log_file: Path | None = None, verbose: bool = False) -> None:
    """Set up the `swarm` logger for this process (idempotent)."""
    root = logging.getLogger("swarm")
    if getattr(root, "_swarm_configured", False):
        return
    debug = verbose or settings.debug()
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    root.addHandler(logging.NullHandler())  # never Python's last-resort stderr printer
    # Commands tell the user what matters with `swarm: warning:`/`error:` lines; log lines go to
    # stderr only when asked for (and not when stderr already is the agent's log, as it is for
    # hidden teammates).
    if debug and not (log_file is not None and _is_stderr(log_file)):
        stderr = logging.StreamHandler()
        stderr.setLevel(logging.DEBUG)
        stderr.setFormatter(RedactingFormatter("swarm: %(levelname)s: %(name)s: %(message)s"))
        root.addHandler(stderr)
    if log_file is not None:
        # 0600 like every file swarm writes: the log may quote commands and their output.
        fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
        handler.setLevel(logging.DEBUG if debug else logging.INFO)
        handler.setFormatter(RedactingFormatter(FORMAT))
        root.addHandler(handler)
    root.propagate = False
    root._swarm_configured = True  # type: ignore[attr-defined]


def _is_stderr(path: Path) -> bool:
    try:
        return os.path.samefile("/proc/self/fd/2", path)
    except OSError:
        return False
