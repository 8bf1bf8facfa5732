"""The one interface every model implements: `complete(request) -> reply`.

Conversations use the Anthropic Messages shape throughout (role + content blocks), so the real
API, the offline `shell` worker and `scripted:` replays all see and produce the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
from msgspec import Struct

from swarm.core.records.state import Usage

# The system prompt of a compaction request starts with this, so offline models can tell a
# "summarize the conversation" call from a turn of work.
SUMMARY_MARKER = "[swarm:compaction]"

# {"type": "text", "text"} | {"type": "tool_use", "id", "name", "input"} | {"type": "thinking",
# "thinking", "signature"} | {"type": "redacted_thinking", "data"}: thinking blocks are kept
# whole and sent back as they came (Anthropic checks their signatures).
Block = dict[str, Any]
THINKING_BLOCKS = ("thinking", "redacted_thinking")


@dataclass
class ModelRequest:
    system: str
    messages: list[dict[str, Any]]  # [{"role": "user"|"assistant", "content": [Block, ...]}]
    tools: list[dict[str, Any]]  # [{"name", "description", "input_schema"}]
    max_tokens: int = 4096
    # Text of the reply as it is generated, for models that stream (the pane shows it live).
    on_text: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    # A failed call waits here before its retry: (the failure in one line, seconds); it may
    # raise to give the call up. None: a plain sleep.
    on_retry: Callable[[str, float], None] | None = field(default=None, compare=False,
                                                           repr=False)
    # Called between streamed chunks with the call's usage so far (priced; output estimated):
    # a line means stop the reply now (a spending cap is reached). None: never stopped.
    on_usage: Callable[[Usage], str | None] | None = field(default=None, compare=False,
                                                          repr=False)
    # Messages whose last block also gets a cache breakpoint: a fork marks where its parent's
    # last request ended, so that prefix is sent byte for byte as the parent sent it.
    cache_marks: tuple[int, ...] = ()
    # How hard to think (core.records.names.EFFORT_LEVELS, None: the model's default): each
    # provider maps it (runtime.models.effort); a fork's first request keeps its parent's.
    effort: str | None = None


class ModelReply(Struct, dict=True):
    content: list[Block]
    stop_reason: str = "end_turn"  # "end_turn" | "tool_use" | "max_tokens" | "budget_exhausted"
    usage: Usage = msgspec.field(default_factory=Usage)
    stopped: str | None = None  # why the reply was cut off (budget_exhausted: on_usage's line)

    def tool_uses(self) -> list[Block]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


class Model(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> ModelReply: ...
