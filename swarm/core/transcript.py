"""`transcript.jsonl`: every message the model saw and said, appended as it happens.

Each line is {"ts", "kind", ...}: kind "message" carries {"role", "content"}; "compaction"
carries the summary that replaced earlier messages; "event" records things like interrupts.
The conversation is rebuilt from the last compaction onward; a torn last line is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarm.core.store import append_line, ensure_dir, utcnow_iso, warn


class Transcript:
    def __init__(self, path: Path) -> None:
        self.path = path
        ensure_dir(path.parent)

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps({"ts": utcnow_iso(), **entry}, ensure_ascii=False) + "\n"
        append_line(self.path, line.encode())

    def message(self, message: dict[str, Any]) -> None:
        self._append({"kind": "message", "message": message})

    def compaction(self, summary: str, kept: list[dict[str, Any]]) -> None:
        self._append({"kind": "compaction", "summary": summary, "kept": kept})

    def event(self, name: str, **data: Any) -> None:
        self._append({"kind": "event", "event": name, **data})

    def entries(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            if isinstance(entry, dict):
                out.append(entry)
            elif number != len(lines):  # a torn last line is a crash mid-append: no news
                warn(f"{self.path}: skipping unreadable line {number}")
        return out

    def conversation(self) -> list[dict[str, Any]]:
        """The messages to resume with: the last compaction's summary and kept turns, then all
        messages after it."""
        messages: list[dict[str, Any]] = []
        for entry in self.entries():
            if entry.get("kind") == "compaction":
                messages = compaction_messages(entry["summary"], entry.get("kept") or [])
            elif entry.get("kind") == "message" and _is_message(entry.get("message")):
                _append_merged(messages, entry["message"])
        return messages


def _is_message(value: Any) -> bool:
    """A line that parses but is no message (hand-edited, another version) is skipped."""
    return (isinstance(value, dict) and value.get("role") in ("user", "assistant")
            and isinstance(value.get("content"), list))


def _append_merged(messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
    """Merge consecutive user messages as the loop does in memory (the API wants alternation);
    the transcript has them as separate lines."""
    if messages and messages[-1]["role"] == message["role"] == "user":
        messages[-1] = {"role": "user",
                        "content": [*messages[-1]["content"], *message["content"]]}
    else:
        messages.append(message)


def compaction_messages(summary: str, kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = {"role": "user", "content": [{"type": "text", "text":
            f"<conversation-summary>\n{summary}\n</conversation-summary>\n"
            "The conversation above was compacted; continue from here."}]}
    if kept and kept[0]["role"] == "user":
        return [head, {"role": "assistant", "content": [{"type": "text", "text": "Understood."}]},
                *kept]
    return [head, *kept]
