"""What a teammate prints: its pane shows it as it happens, and agent.log keeps the same lines.

The lines come from `swarm.core.view` (the renderer `swarm transcript` uses too): the first line
of each thing shown gets the time, the rest are indented under it. Streamed model text is
printed as it arrives; the log gets it once it is complete.

The pane is a terminal, so nothing reaches it unfiltered (core/terminal.py): plain text (`say`,
`stream`) is made visible whole; styled lines from the View keep only swarm's own colours.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from swarm.core.terminal import visible
from swarm.core.view import View

STAMP_WIDTH = 9  # "HH:MM:SS "
STREAM_INDENT = " " * (STAMP_WIDTH + len("says: "))


class Console:
    def __init__(self, log_path: Path, name: str) -> None:
        self.name = name
        self.log_path = log_path
        self.view = View(color=True)
        # Hidden agents already write stdout to agent.log; pane agents also keep a copy there.
        try:
            same = os.path.samefile(f"/proc/self/fd/{sys.stdout.fileno()}", log_path)
        except (OSError, ValueError):
            same = False
        self._copy = not same
        self._streaming = False

    def say(self, text: str) -> None:
        """One plain line (it may quote team data: a hook's output, a failure)."""
        self.show(visible(text))

    def show(self, *lines: str) -> None:
        """Print `lines` as one thing: the time on the first, the rest indented under it."""
        if not lines:
            return
        self._end_stream_line()
        stamp = self.view.dim(time.strftime("%H:%M:%S"))
        text = "\n".join([f"{stamp} {lines[0]}", *(" " * STAMP_WIDTH + ln for ln in lines[1:])])
        text = visible(text, styles=True)  # the View's data is visible already; this is the net
        self._out(text + "\n")
        self._log(text + "\n")

    def stream(self, text: str) -> None:
        """A piece of the model's reply, shown as it comes (the log gets it whole, later)."""
        if not text:
            return
        if not self._streaming:
            self._streaming = True
            self._out(f"{self.view.dim(time.strftime('%H:%M:%S'))} says: ")
        self._out(visible(text).replace("\n", "\n" + STREAM_INDENT))

    def end_stream(self, text: str) -> bool:
        """The streamed reply is complete: close its line, log it. False if nothing streamed."""
        if not self._streaming:
            return False
        self._end_stream_line()
        lines = self.view.says(text)
        stamp = self.view.dim(time.strftime("%H:%M:%S"))
        self._log("\n".join([f"{stamp} {lines[0]}",
                             *(" " * STAMP_WIDTH + ln for ln in lines[1:])]) + "\n")
        return True

    def _end_stream_line(self) -> None:
        if self._streaming:
            self._streaming = False
            self._out("\n")

    def _out(self, text: str) -> None:
        # The pane may be gone; the log copy still records the line.
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.write(text)
            sys.stdout.flush()

    def _log(self, text: str) -> None:
        if not self._copy:
            return
        try:  # 0600: the log may quote commands and their output
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError:
            pass


def brief(text: str, limit: int = 100) -> str:
    """`text` on one line of at most `limit` characters, cut after a whole word when one ends
    in the last third (a long path or URL is cut where the limit is)."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: max(limit - 3, 0)]
    space = cut.rfind(" ")
    return (cut[:space] if space >= len(cut) * 2 // 3 else cut) + "..."
