"""The agentic loop, top to bottom: model -> tools -> model ... until the model ends its turn.

The loop knows nothing of processes, signals or mailboxes; the agent hands it hooks for the
permission check (which may ask the lead) and for stopping early (interrupt, limits, shutdown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swarm.core.rules import Decision
from swarm.core.state import Usage
from swarm.errors import SwarmError
from swarm.runtime.models.base import Model, ModelReply, ModelRequest
from swarm.runtime.team_tools import run_tool
from swarm.runtime.tools import Tool, ToolContext, ToolResult


class TurnInterrupted(Exception):
    """Raised (from a signal handler or a hook) to abandon the current turn."""


@dataclass
class TurnOutcome:
    reason: str = "available"  # idle_reason: available|interrupted|failed|budget_exhausted|max_turns
    failure: str | None = None
    last_text: str = ""


@dataclass
class Loop:
    model: Model
    tools: dict[str, Tool]
    system: str
    ctx: ToolContext
    messages: list[dict[str, Any]] = field(default_factory=list)
    record: Callable[[dict[str, Any]], None] = lambda message: None  # append to the transcript
    permit: Callable[[Tool, dict[str, Any], str], Decision] = (
        lambda tool, args, use_id: Decision("allow", "no checks")
    )
    on_usage: Callable[[Usage], None] = lambda usage: None
    stop_reason: Callable[[], str | None] = lambda: None  # a limit reached, or shutdown approved
    before_call: Callable[[Loop], None] = lambda loop: None  # e.g. compaction
    # Wraps every model call: the agent makes it interruptible by SIGINT.
    guard: Callable[[Callable[[], ModelReply]], ModelReply] = lambda call: call()
    trace: Callable[[str], None] = lambda line: None  # what the pane shows

    def add(self, message: dict[str, Any]) -> None:
        # Consecutive user messages are merged: the API wants strict alternation.
        if self.messages and self.messages[-1]["role"] == message["role"] == "user":
            self.messages[-1] = {"role": "user",
                                 "content": [*self.messages[-1]["content"], *message["content"]]}
        else:
            self.messages.append(message)
        self.record(message)

    def request(self) -> ModelRequest:
        return ModelRequest(self.system, self.messages, [t.spec() for t in self.tools.values()])

    def run(self, user_content: list[dict[str, Any]]) -> TurnOutcome:
        outcome = TurnOutcome()
        self.add({"role": "user", "content": user_content})
        try:
            while True:
                limit = self.stop_reason()
                if limit:
                    outcome.reason = limit
                    return outcome
                self.before_call(self)
                try:
                    request = self.request()
                    reply = self.guard(lambda r=request: self.model.complete(r))  # type: ignore[misc]
                except SwarmError as exc:
                    outcome.reason, outcome.failure = "failed", str(exc)
                    return outcome
                self.on_usage(reply.usage)
                self.add({"role": "assistant", "content": reply.content})
                outcome.last_text = reply.text() or outcome.last_text
                if reply.text().strip():
                    self.trace(f"says: {reply.text().strip()}")
                uses = reply.tool_uses()
                if not uses:
                    return outcome
                results = [self.call(use) for use in uses]
                self.add({"role": "user", "content": results})
        except TurnInterrupted:
            outcome.reason = "interrupted"
            self.close_dangling("interrupted by the user")
            return outcome

    def call(self, use: dict[str, Any]) -> dict[str, Any]:
        tool = self.tools.get(use["name"])
        args = use.get("input") or {}
        if tool is None:
            result = ToolResult(f"unknown tool {use['name']!r}; you have: "
                                f"{', '.join(self.tools)}", is_error=True)
        elif not isinstance(args, dict):
            result = ToolResult("tool input must be an object", is_error=True)
        else:
            self.trace(f"-> {tool.describe(args)}")
            decision = self.permit(tool, args, use["id"])
            if decision.behavior != "allow":
                result = ToolResult(f"permission denied: {decision.reason}", is_error=True)
            else:
                args = decision.updated_input or args
                result = run_tool(tool, args, self.ctx)
        if result.is_error:
            self.trace(f"   error: {result.content}")
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use["id"],
                                 "content": result.content}
        if result.is_error:
            block["is_error"] = True
        return block

    def close_dangling(self, why: str) -> None:
        """After an interrupt, answer every tool_use still open, so the conversation stays valid."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return
        open_uses = [b for b in self.messages[-1]["content"] if b.get("type") == "tool_use"]
        if open_uses:
            self.add({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b["id"], "content": why, "is_error": True}
                for b in open_uses]})
