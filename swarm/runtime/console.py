"""What a teammate prints: one line per event, shown in its pane and kept in agent.log."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path


class Console:
    def __init__(self, log_path: Path, name: str) -> None:
        self.name = name
        self.log_path = log_path
        # Hidden agents already write stdout to agent.log; pane agents also keep a copy there.
        try:
            same = os.path.samefile(f"/proc/self/fd/{sys.stdout.fileno()}", log_path)
        except (OSError, ValueError):
            same = False
        self._copy = not same

    def say(self, text: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {text}"
        # The pane may be gone; the log copy below still records the line.
        with contextlib.suppress(OSError, ValueError):
            print(line, flush=True)
        if self._copy:
            try:  # 0600: the log may quote commands and their output
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                with os.fdopen(fd, "a", encoding="utf-8") as handle:
                    handle.write(line + "\n")
            except OSError:
                pass


def brief(text: str, limit: int = 100) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
