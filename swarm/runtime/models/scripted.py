"""`scripted:PATH`: replay assistant turns from a JSON or YAML file, for exact-behaviour tests.

The file is a list of turns (or {"turns": [...]}). A turn is {"content": [blocks]} in the
Anthropic shape, or the short form {"text": "...", "tool_uses": [{"name", "input"}, ...]}.
The n-th model call in a conversation gets the n-th turn (counted from the assistant messages
already in the conversation, so a respawned agent continues where it was). Past the end, the
model just ends its turn, and a teammate approves a shutdown request without it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from swarm.errors import BadInputError
from swarm.runtime.models.base import SUMMARY_MARKER, Block, ModelReply, ModelRequest


def load_turns(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_text()
    except OSError as exc:
        raise BadInputError(f"cannot read script {path}: {exc.strerror}") from exc
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(raw)
        else:
            data = json.loads(raw)
    except Exception as exc:  # yaml and json raise different types; both mean "bad file"
        raise BadInputError(f"script {path} does not parse: {exc}") from exc
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
        raise BadInputError(f"script {path}: expected a list of turns (objects)")
    return turns


def to_blocks(turn: dict[str, Any]) -> list[Block]:
    if "content" in turn:
        return [dict(b) for b in turn["content"]]
    blocks: list[Block] = []
    if turn.get("text"):
        blocks.append({"type": "text", "text": str(turn["text"])})
    for use in turn.get("tool_uses") or []:
        blocks.append({"type": "tool_use", "id": use.get("id") or f"toolu_{uuid.uuid4().hex[:20]}",
                       "name": use["name"], "input": use.get("input") or {}})
    return blocks


class ScriptedModel:
    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        self.path = path
        self.name = f"scripted:{path}"
        self.turns = load_turns(path)

    def ended(self, messages: list[dict[str, Any]]) -> bool:
        """Past its last turn in this conversation: it can only say `(end of script)`."""
        return sum(1 for m in messages if m["role"] == "assistant") >= len(self.turns)

    def complete(self, request: ModelRequest) -> ModelReply:
        if request.system.startswith(SUMMARY_MARKER):  # not one of the script's turns
            return ModelReply([{"type": "text", "text": "(summary of the scripted conversation)"}])
        index = sum(1 for m in request.messages if m["role"] == "assistant")
        if self.ended(request.messages):
            return ModelReply([{"type": "text", "text": "(end of script)"}])
        blocks = to_blocks(self.turns[index])
        uses = any(b.get("type") == "tool_use" for b in blocks)
        return ModelReply(blocks or [{"type": "text", "text": ""}], "tool_use" if uses else "end_turn")
