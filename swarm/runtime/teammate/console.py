"""What a teammate prints: its pane shows it as it happens, and agent.log keeps the same lines.

The lines come from `swarm.core.text.view` (the renderer `swarm transcript` uses too): the first line
of each thing shown gets the time, the rest are indented under it. Streamed model text is
printed as it arrives; the log gets it once it is complete.

The pane is a terminal, so nothing reaches it unfiltered (core/text/terminal.py): plain text (`say`,
`stream`) is made visible whole; styled lines from the View keep only swarm's own colours.

Long work shows it is alive, on a terminal only (never in agent.log): a status line under the
rest (`thinking 12s`, `running Bash "make" 1m05s`, between turns `idle 3m00s`) that a ticker
thread rewrites each second, and a running command's output as it comes, once it has run
STREAM_AFTER seconds (a quick one shows its result only), bounded: STREAM_LINES lines of at most
LINE_WIDTH characters per command; its result is then one line (`12 lines, exit 0`), not the
lines again (agent.log, which had no stream, gets the result).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.core.records.state import elapsed_text
from swarm.core.text.tables import cut
from swarm.core.text.terminal import visible, visible_line
from swarm.core.text.view import INDENT, View
from swarm.runtime.turn.hooks import LoopHooks

if TYPE_CHECKING:
    from swarm.runtime.models.base import ModelReply
    from swarm.runtime.tools.base import Tool, ToolResult

STAMP_WIDTH = 9  # "HH:MM:SS "
STREAM_INDENT = " " * (STAMP_WIDTH + len("says: "))
STREAM_AFTER = 1.0  # seconds a command runs before its output streams
STREAM_LINES = 100  # lines of one command's output streamed at most (the result has the rest)
LINE_WIDTH = 200  # characters of one streamed line
TICK = 1.0  # seconds between two redraws of the status line
ERASE = "\r\x1b[K"  # back to the line's start, clear it: the status line is rewritten


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
        self._tty = _is_tty()
        self._lock = threading.RLock()  # the ticker thread writes too
        self._ticker: threading.Thread | None = None
        self._busy = threading.Event()  # a call is under way: the ticker runs
        self._status: str | None = None  # what the status line says (None: no status line)
        self._since = 0.0
        self._drawn = False  # the status line is on screen (the cursor at its end)
        self._live = False  # the command's output streams now
        self._held: list[str] = []  # its lines before STREAM_AFTER
        self._partial = ""  # its last line, not ended yet
        self._lines = 0
        self._streamed = 0  # lines of the last command's output shown as they came
        self._idle = False  # the status line says how long it has been idle

    def say(self, text: str) -> None:
        """One plain line (it may quote team data: a hook's output, a failure)."""
        self.show(visible(text))

    def show(self, *lines: str, log: tuple[str, ...] | None = None) -> None:
        """Print `lines` as one thing: the time on the first, the rest indented under it.
        `log`: what agent.log gets instead (it had no streamed output)."""
        if not lines:
            return
        text = self._stamped(lines)
        with self._lock:
            self._end_stream_line()
            self._out(text + "\n")
            self._draw()
        self._log((text if log is None else self._stamped(log)) + "\n")

    def _stamped(self, lines: tuple[str, ...]) -> str:
        stamp = self.view.dim(time.strftime("%H:%M:%S"))
        text = "\n".join([f"{stamp} {lines[0]}", *(" " * STAMP_WIDTH + ln for ln in lines[1:])])
        return visible(text, styles=True)  # the View's data is visible already; this is the net

    def result(self, content: Any, is_error: bool = False) -> None:
        """A tool's result under its call. A command whose output the pane showed as it came
        gets one line there instead (`12 lines, exit 0`); agent.log keeps the result."""
        lines = tuple(self.view.result(content, is_error))
        with self._lock:
            streamed, self._streamed = self._streamed, 0
        if streamed:
            self.show(self.view.ran(content, is_error), log=lines)
        else:
            self.show(*lines)

    def idle(self) -> None:
        """Idle: the status line says so and for how long (`idle 3m00s`), as `status --watch`
        does; the next activity (or `activity(None)`) replaces it."""
        if not self._tty:
            return
        with self._lock:
            self._status, self._idle = "idle", True
            self._since = time.monotonic()
            self._busy.set()
        self._start_ticker()

    def stream(self, text: str) -> None:
        """A piece of the model's reply, shown as it comes (the log gets it whole, later)."""
        if not text:
            return
        with self._lock:
            if not self._streaming:
                self._streaming = True
                self._out(f"{self.view.dim(time.strftime('%H:%M:%S'))} says: ")
            self._out(visible(text).replace("\n", "\n" + STREAM_INDENT))

    # -- long work: the status line and a command's output as it comes (a terminal only) -------
    def activity(self, what: str | None) -> None:
        """"thinking", a tool call's line, or None (done): the status line shows it with its
        elapsed time from the first tick on."""
        if not self._tty:
            return
        with self._lock:
            if what is None:
                if self._live and self._partial and self._lines < STREAM_LINES:
                    self._print_output([self._partial])  # its last line had no newline
                self._status, self._idle = None, False
                self._erase()
                return
            self._status = what if what == "thinking" else f"running {visible_line(what)}"
            self._since, self._idle, self._streamed = time.monotonic(), False, 0
            self._live, self._held, self._partial, self._lines = False, [], "", 0
            self._busy.set()
        self._start_ticker()

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="console-ticker", daemon=True)
            self._ticker.start()

    def output(self, text: str) -> None:
        """A piece of the running command's output: whole lines, escaped and bounded."""
        if not self._tty:
            return
        with self._lock:
            if self._status is None or self._lines >= STREAM_LINES:
                return  # past the bound: nothing more to do for this command
            parts = (self._partial + text.replace("\r\n", "\n").replace("\r", "\n")).split("\n")
            self._partial = parts.pop()[:LINE_WIDTH + 1]  # one endless line stays bounded
            lines = parts[:STREAM_LINES - self._lines]
            self._lines += len(lines)
            if not self._live:
                self._held += lines
                return
            self._print_output(lines)

    def _print_output(self, lines: list[str]) -> None:
        shown = [self.view.dim(f"{INDENT}| {cut(visible(line), LINE_WIDTH)}") for line in lines]
        self._streamed += len(lines)
        if self._lines >= STREAM_LINES:
            shown.append(self.view.dim(f"{INDENT}... more output (the result shows its end)"))
        if shown:
            self._erase()
            self._out("\n".join(shown) + "\n")
            self._draw()

    def _tick(self) -> None:
        while True:
            self._busy.wait()  # with no status line (hidden, or stopped) the ticker sleeps
            time.sleep(TICK)
            with self._lock:
                if self._status is None:
                    self._busy.clear()
                    continue
                if (not self._live and not self._idle
                        and time.monotonic() - self._since >= STREAM_AFTER):
                    self._live = True
                    held, self._held = self._held, []
                    self._print_output(held)
                self._draw()

    def _draw(self) -> None:
        """(Re)write the status line, unless the model's text is mid-line."""
        if self._status is None or self._streaming or (
                time.monotonic() - self._since < STREAM_AFTER):
            return  # (a quick call never flashes a status line)
        elapsed = elapsed_text(time.monotonic() - self._since)
        # One row (a wrapped line is not erased whole), the label cut rather than the time.
        label = cut(self._status, _width() - len(INDENT) - len(elapsed) - 2)
        self._out(ERASE + self.view.dim(f"{INDENT}{label} {elapsed}"), erase=False)
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self._drawn = False
            self._out(ERASE, erase=False)

    def end_stream(self, text: str) -> bool:
        """The streamed reply is complete: close its line, log it. False if nothing streamed."""
        if not self._streaming:
            return False
        with self._lock:
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

    def _out(self, text: str, erase: bool = True) -> None:
        if erase:
            self._erase()  # nothing prints after the status line: it is always the last
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


def _is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (OSError, ValueError):
        return False


def _width() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return 80


def brief(text: str, limit: int = 100) -> str:
    """`text` on one line of at most `limit` characters, cut after a whole word when one ends
    in the last third (a long path or URL is cut where the limit is)."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: max(limit - 3, 0)]
    space = cut.rfind(" ")
    return (cut[:space] if space >= len(cut) * 2 // 3 else cut) + "..."


class Pane(LoopHooks):
    """The loop's observer that shows a teammate's turn in its pane (and agent.log)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def activity(self, what: str | None) -> None:
        self.console.activity(what)

    def on_text(self, text: str) -> None:
        self.console.stream(text)

    def on_reply(self, reply: ModelReply) -> None:
        text = reply.text().strip()
        if not self.console.end_stream(text) and text:
            self.console.show(*self.console.view.says(text))

    def tool_output(self, text: str) -> None:
        self.console.output(text)

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> None:
        self.console.result(result.content, result.is_error)

    def trace(self, line: str) -> None:
        self.console.say(brief(line, 160))
