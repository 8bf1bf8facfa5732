"""How a teammate's work reads as text: what its pane shows while it works (agent.log keeps the
same lines, so `swarm logs` prints them again) and what `swarm transcript` prints afterwards,
uncut. One renderer for the three, so a pane and a transcript say the same thing the same way.

Styles are ANSI codes (dim for tool output, the sender's colour for incoming messages); `View
(color=False)` gives plain text. `swarm logs` lets click strip them when it does not print to a
terminal. Every piece of data (model text, tool output, messages, names) is made `visible` before
it is styled: its control characters print as escapes, so only the styles are raw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from html import unescape
from typing import Any

from msgspec import Struct

from swarm.core.text.readable import flat, tool_call
from swarm.core.text.terminal import visible

RESULT_LINES = 5  # lines of a tool's output a pane shows
INCOMING_LINES = 3  # lines of an incoming message's text a pane shows under its summary
THINKING_CHARS = 80  # of a thinking block, folded to one line in a transcript
INDENT = "   "
ANSI = {"black": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35,
        "cyan": 36, "white": 37, "bright_black": 90, "bright_red": 91, "bright_green": 92,
        "bright_yellow": 93, "bright_blue": 94, "bright_magenta": 95, "bright_cyan": 96,
        "bright_white": 97}
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_MESSAGE_RE = re.compile(r"<teammate-message ([^>]*)>(.*?)</teammate-message>", re.DOTALL)
_TASK_RE = re.compile(r'<task-assignment id="([^"]*)" subject="([^"]*)">\n?(.*?)</task-assignment>',
                      re.DOTALL)
_ATTR_RE = re.compile(r'(\w+)="([^"]*)"')
_EXIT_RE = re.compile(r"\[exit code (-?\d+)\]")  # how the Bash tool ends a failed command


def plain(text: str) -> str:
    """`text` without its ANSI styles."""
    return ANSI_RE.sub("", text)


def result_text(content: Any) -> str:
    """A tool result's content (a string, or a list of blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b)
                         for b in content)
    return "" if content is None else json.dumps(content)


class View(Struct, frozen=True):
    color: bool = True
    cut: bool = True  # False: every line of every output (the transcript)

    # -- styles --------------------------------------------------------------------------------
    def _paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def dim(self, text: str) -> str:
        return self._paint(text, "2")

    def colored(self, text: str, color: str | None) -> str:
        code = ANSI.get(color or "")
        return self._paint(text, str(code)) if code else self._paint(text, "1")

    def _cut(self, lines: list[str], limit: int) -> tuple[list[str], int]:
        if not self.cut or len(lines) <= limit:
            return lines, 0
        return lines[:limit], len(lines) - limit

    # -- what an agent does --------------------------------------------------------------------
    def says(self, text: str) -> list[str]:
        """What the model said, every line of it."""
        lines = visible(text).strip().splitlines() or [""]
        return [f"says: {lines[0]}", *(f"{INDENT}   {line}" for line in lines[1:])]

    def thinking(self, block: dict[str, Any]) -> str:
        """A thinking block, folded to one dim line: its size and how it begins (a redacted
        one: only that it was there)."""
        if block.get("type") == "redacted_thinking":
            return self.dim("[thinking, redacted]")
        text = flat(str(block.get("thinking", "")))
        head = visible(text[:THINKING_CHARS] + ("..." if len(text) > THINKING_CHARS else ""))
        return self.dim(f"[thinking, {len(text)} chars] {head}".rstrip())

    def call(self, name: str, args: Any) -> str:
        return f"-> {visible(tool_call(name, args))}"

    def result(self, content: Any, is_error: bool = False) -> list[str]:
        """A tool's output under its call: dimmed, the first lines only (with how many more)."""
        lines = visible(result_text(content)).rstrip().splitlines()
        if not lines:
            return [self.dim(f"{INDENT}(no output)")] if not is_error else [
                self._paint(f"{INDENT}error", "31")]
        shown, more = self._cut(lines, RESULT_LINES)
        mark = "! " if is_error else "| "
        out = [self._paint(f"{INDENT}{mark}{line}", "31") if is_error
               else self.dim(f"{INDENT}{mark}{line}") for line in shown]
        if more:
            out.append(self.dim(f"{INDENT}... {more} more line{'s' if more > 1 else ''}"))
        return out

    def ran(self, content: Any, is_error: bool = False) -> str:
        """The one line under a command whose output the pane showed as it came: how many
        lines and how it ended (`12 lines, exit 0`; `3 lines, exit 3`), not the lines again."""
        lines = visible(result_text(content)).rstrip().splitlines()
        ended = _EXIT_RE.fullmatch(lines[-1]) if lines else None
        how = "exit 0"
        if ended or (is_error and lines):  # its last line says how it ended
            how, lines = (f"exit {ended.group(1)}" if ended else lines[-1]), lines[:-1]
            while lines and not lines[-1].strip():  # the blank line before that one
                lines.pop()
        text = f"{INDENT}{len(lines)} line{'' if len(lines) == 1 else 's'}, {how}"
        return self._paint(text, "31") if is_error else self.dim(text)

    def incoming(self, sender: str, color: str | None, line: str, text: str = "") -> list[str]:
        """A message that arrived: the sender in its colour, its one-line form, then the first
        lines of its text when that says more."""
        line, text = visible(line), visible(text)
        out = [f"<- {self.colored(visible(sender), color)}: {line}"]
        body = text.strip().splitlines()
        if body and flat(text) != flat(line):
            shown, more = self._cut(body, INCOMING_LINES)
            out += [self.dim(f"{INDENT}  {b}") for b in shown]
            if more:
                out.append(self.dim(f"{INDENT}  ... {more} more line{'s' if more > 1 else ''}"))
        return out

    def claimed(self, task_id: str, subject: str, description: str = "") -> list[str]:
        out = [f"claimed task #{visible(task_id)}: {visible(flat(subject))}"]
        body = visible(description).strip().splitlines()
        shown, more = self._cut(body, INCOMING_LINES)
        out += [self.dim(f"{INDENT}  {b}") for b in shown]
        if more:
            out.append(self.dim(f"{INDENT}  ... {more} more lines"))
        return out

    def asks(self, what: str, request_id: str) -> str:
        return self._paint(visible(f"?? waiting for the lead: {what} [id {request_id[:8]}]"),
                           "33")

    def answered(self, allowed: bool, reason: str) -> str:
        if allowed:
            return self._paint(f"{INDENT}ok: {visible(reason)}", "32")
        return self._paint(f"{INDENT}no: {visible(reason)}", "31")

    # -- the transcript ------------------------------------------------------------------------
    def transcript(self, entries: Iterable[dict[str, Any]]) -> list[str]:
        """Every entry of a transcript, rendered as the pane showed it (uncut unless `cut`)."""
        out: list[str] = []
        for entry in entries:
            stamp = visible(str(entry.get("ts", ""))[11:19]).ljust(8)
            lines = self._entry(entry)
            out += [f"{self.dim(stamp)} {lines[0]}", *(f"{' ' * 8} {ln}" for ln in lines[1:])
                    ] if lines else []
        return out

    def _entry(self, entry: dict[str, Any]) -> list[str]:
        kind = entry.get("kind")
        if kind == "event":
            detail = {k: v for k, v in entry.items() if k not in ("ts", "kind", "event")}
            extra = ", ".join(f"{k} {v}" for k, v in detail.items() if v not in (None, [], ""))
            return [self.dim(visible(f"[{entry.get('event', 'event')}{': ' + extra if extra else ''}]"))]
        if kind == "compaction":
            summary = visible(str(entry.get("summary", ""))).splitlines()
            return [self.dim("[compacted]"), *(self.dim(f"{INDENT}{ln}") for ln in summary)]
        message = entry.get("message")
        if kind != "message" or not isinstance(message, dict):
            return []
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [
            b for b in content or [] if isinstance(b, dict)]
        lines: list[str] = []
        for block in blocks:
            kind_of = block.get("type")
            if kind_of == "text" and message.get("role") == "assistant":
                if str(block.get("text", "")).strip():
                    lines += self.says(str(block["text"]))
            elif kind_of == "text":
                lines += self._input(str(block.get("text", "")))
            elif kind_of in ("thinking", "redacted_thinking"):
                lines.append(self.thinking(block))
            elif kind_of == "tool_use":
                lines.append(self.call(str(block.get("name")), block.get("input")))
            elif kind_of == "tool_result":
                lines += self.result(block.get("content"), bool(block.get("is_error")))
        return lines

    def _input(self, text: str) -> list[str]:
        """An input as the agent received it: messages (sender, summary, text), a task."""
        lines: list[str] = []
        for match in _MESSAGE_RE.finditer(text):
            attrs = {k: unescape(v) for k, v in _ATTR_RE.findall(match.group(1))}
            body = unescape(match.group(2))
            lines += self.incoming(attrs.get("from", "?"), attrs.get("color"),
                                   attrs.get("summary") or flat(body)[:100], body)
        for match in _TASK_RE.finditer(text):
            lines += self.claimed(match.group(1), unescape(match.group(2)),
                                  unescape(match.group(3)))
        rest = visible(_TASK_RE.sub("", _MESSAGE_RE.sub("", text))).strip()
        if rest and not lines:
            lines += [f"input: {ln}" if i == 0 else f"{INDENT}    {ln}"
                      for i, ln in enumerate(rest.splitlines())]
        return lines
