"""`transcript.jsonl`: every message the model saw and said, appended as it happens.

Each line is {"ts", "kind", ...}: kind "message" carries {"role", "content"}; "compaction"
carries the summary that replaced earlier messages; "event" records things like interrupts.
The conversation is rebuilt from the last compaction onward; a torn last line is skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from swarm.core.store import ensure_dir, utcnow_iso, warn


class Transcript:
    def __init__(self, path: Path) -> None:
        self.path = path
        ensure_dir(path.parent)

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps({"ts": utcnow_iso(), **entry}, ensure_ascii=False) + "\n"
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # After a crash mid-append, start a new line: glued to the torn one, it would be lost.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = "\n" + line
            os.write(fd, line.encode())
        finally:
            os.close(fd)

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
                out.append(json.loads(line))
            except ValueError:
                if number != len(lines):
                    warn(f"{self.path}: skipping unreadable line {number}")
        return out

    def conversation(self) -> list[dict[str, Any]]:
        """The messages to resume with: the last compaction's summary and kept turns, then all
        messages after it."""
        messages: list[dict[str, Any]] = []
        for entry in self.entries():
            if entry.get("kind") == "compaction":
                messages = compaction_messages(entry["summary"], entry.get("kept") or [])
            elif entry.get("kind") == "message":
                _append_merged(messages, entry["message"])
        return messages


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
