"""`transcript.jsonl`: every message the model saw and said, appended as it happens.

Each line is {"ts", "kind", ...}: kind "message" carries {"role", "content"}; "compaction"
carries the summary that replaced earlier messages; "event" records things like interrupts.
The conversation is rebuilt from the last compaction onward; a torn last line is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarm.core.store.disk import append_line, ensure_dir, utcnow_iso, warn


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
        out, bad, count = read_entries(self.path)
        for number in bad:
            if number != count:  # a torn last line is a crash mid-append: expected, no warning
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


def read_entries(path: Path) -> tuple[list[dict[str, Any]], list[int], int]:
    """The entries of a transcript file, the numbers of the lines that did not parse (skipped),
    and the number of lines."""
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return [], [], 0
    kept = [line for line in lines if line.strip()]
    try:  # one parse for the whole file (about twice as fast); line by line if any line is bad
        whole = json.loads(b"[" + b",".join(kept) + b"]")
    except ValueError:
        whole = None
    if isinstance(whole, list) and all(isinstance(entry, dict) for entry in whole):
        return whole, [], len(lines)
    out: list[dict[str, Any]] = []
    bad: list[int] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if isinstance(entry, dict):
            out.append(entry)
        else:
            bad.append(number)
    return out, bad, len(lines)


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
