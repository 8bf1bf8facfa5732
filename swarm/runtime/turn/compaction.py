"""Compaction: past a token threshold, the conversation sent to the model becomes a
model-written summary plus the current turn. The transcript keeps everything, and records it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from swarm import settings
from swarm.core.records.state import Usage
from swarm.core.team.transcript import compaction_messages
from swarm.runtime.models.base import SUMMARY_MARKER, ModelRequest
from swarm.runtime.turn.hooks import Conversation

DEFAULT_THRESHOLD = 120_000
SUMMARY_PROMPT = (
    f"{SUMMARY_MARKER} You compress a teammate's conversation so it can keep working. Write a"
    " concise summary: the goal, what was done and found, decisions made, open questions, files"
    " touched, and anything the teammate promised to do. Plain text, no preamble."
)


def threshold() -> int:
    return settings.compact_threshold()


def estimate_tokens(system: str, messages: list[dict[str, Any]]) -> int:
    """About four characters a token: good enough to decide when to compact."""
    return (len(system) + len(json.dumps(messages, ensure_ascii=False))) // 4


def _current_turn_start(messages: list[dict[str, Any]]) -> int:
    """Index of the user message that began the current turn (text input, not tool results)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user" and any(b.get("type") == "text" for b in message["content"]):
            return index
    return 0


def _is_summary(message: dict[str, Any]) -> bool:
    return message["role"] == "user" and any(
        "<conversation-summary>" in b.get("text", "") for b in message["content"])


def _readable(message: dict[str, Any]) -> dict[str, Any]:
    """A message for the summary model: thinking as its text only, redacted thinking left out."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    return {**message, "content": [
        {"type": "thinking", "thinking": b.get("thinking", "")} if b.get("type") == "thinking"
        else b for b in content if b.get("type") != "redacted_thinking"]}


class Compactor:
    """A `before_call` step of the loop (`TurnControl.before_call`)."""

    def __init__(self, on_compacted: Callable[[str, list[dict[str, Any]]], None],
                 on_usage: Callable[[Usage], None], limit: int | None = None) -> None:
        self.on_compacted = on_compacted
        self.on_usage = on_usage
        self.limit = limit if limit is not None else threshold()
        self.last_input_tokens = 0

    def __call__(self, loop: Conversation) -> None:
        size = max(estimate_tokens(loop.system, loop.messages), self.last_input_tokens)
        if size <= self.limit:
            return
        cut = _current_turn_start(loop.messages)
        if cut == 0 or (cut <= 2 and _is_summary(loop.messages[0])):
            return  # only the current turn (and an earlier summary): nothing older to fold away
        # The kept turn keeps its thinking blocks whole (the API wants them back with the tool
        # calls they led to); the summary model reads older thinking as text, no signatures.
        older, kept = loop.messages[:cut], loop.messages[cut:]
        transcript = json.dumps([_readable(m) for m in older], ensure_ascii=False)
        request = ModelRequest(SUMMARY_PROMPT, [{"role": "user", "content": [
            {"type": "text", "text": f"<conversation>\n{transcript}\n</conversation>\nSummarize it."}]}],
            tools=[], max_tokens=2048)
        reply = loop.complete(request)
        self.on_usage(reply.usage)
        summary = reply.text().strip() or "(no summary)"
        loop.messages = compaction_messages(summary, kept)
        loop.cache_marks = ()  # the prefix a fork shared with its parent is folded away
        self.last_input_tokens = 0
        self.on_compacted(summary, kept)
