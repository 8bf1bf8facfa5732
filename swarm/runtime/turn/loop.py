"""The agentic loop, top to bottom: model -> tools -> model ... until the model ends its turn.

The loop knows nothing of processes, signals or mailboxes. It asks its `Permits` whether a call
may run, its `TurnControl` for the turn's decisions (interrupts, limits, compaction, arrivals),
tells its `LoopHooks` what happens (the pane, usage, the transcript), and runs the user's
PostToolUse through its `ToolHooks` (turn/hooks.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from msgspec import Struct
from msgspec.structs import replace as replace_struct

from swarm.core.records.permissions import Decision
from swarm.core.text.readable import tool_call
from swarm.core.trust.secrets import redact
from swarm.errors import SwarmError, ToolError, TurnInterrupted
from swarm.runtime.models.base import Model, ModelReply, ModelRequest
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult, run_tool
from swarm.runtime.turn.hooks import LoopHooks, Permits, ToolHooks, TurnControl


class TurnOutcome(Struct, dict=True):
    reason: str = "available"  # idle_reason: available|interrupted|failed|budget_exhausted|max_turns
    failure: str | None = None
    last_text: str = ""


@dataclass
class Loop:
    model: Model
    tools: dict[str, Tool]
    system: str
    ctx: ToolContext
    permits: Permits  # "may this call run?" (the permission policy)
    control: TurnControl = field(default_factory=TurnControl)
    hooks: tuple[LoopHooks, ...] = ()  # its observers
    tool_hooks: ToolHooks = field(default_factory=ToolHooks)  # the user's (PostToolUse here)
    messages: list[dict[str, Any]] = field(default_factory=list)
    cache_marks: tuple[int, ...] = ()  # see ModelRequest.cache_marks (a fork's parent prefix)
    effort: str | None = None  # see ModelRequest.effort: every request of the loop carries it
    # The request of the latest model call, as sent (a fork starts from it byte for byte).
    last_request: ModelRequest | None = None

    def add(self, message: dict[str, Any]) -> None:
        # Consecutive user messages are merged: the API wants strict alternation.
        if self.messages and self.messages[-1]["role"] == message["role"] == "user":
            self.messages[-1] = {"role": "user",
                                 "content": [*self.messages[-1]["content"], *message["content"]]}
        else:
            self.messages.append(message)
        for hook in self.hooks:
            hook.record(message)

    def request(self) -> ModelRequest:
        return ModelRequest(self.system, self.messages, [t.spec() for t in self.tools.values()],
                            on_text=self._text, on_retry=self.control.retry_wait,
                            on_usage=self.control.spend_limit, cache_marks=self.cache_marks,
                            effort=self.effort)

    def complete(self, request: ModelRequest) -> ModelReply:
        """A model call of the turn's own (compaction's summary), guarded like the turn's."""
        return self.control.guard(partial(self.model.complete, request))

    def _text(self, text: str) -> None:
        for hook in self.hooks:
            hook.on_text(text)

    def _output(self, text: str) -> None:
        for hook in self.hooks:
            hook.tool_output(text)

    def _activity(self, what: str | None) -> None:
        for hook in self.hooks:
            hook.activity(what)

    def _trace(self, line: str) -> None:
        for hook in self.hooks:
            hook.trace(line)

    def run(self, user_content: list[dict[str, Any]] | None = None) -> TurnOutcome:
        """One turn. `user_content` starts it (None: the caller already added the input)."""
        outcome = TurnOutcome()
        if user_content:
            self.add({"role": "user", "content": user_content})
        try:
            while True:
                limit = self.control.stop_reason()
                if limit:
                    outcome.reason = limit
                    return outcome
                self.control.before_call(self)
                request = self.request()
                # A copy of the list: the loop appends to `messages` after the call.
                self.last_request = replace(request, messages=list(request.messages))
                self._activity("thinking")
                try:
                    reply = self.complete(request)
                except SwarmError as exc:
                    # Recorded in state, the idle note and the log: never a secret.
                    outcome.reason, outcome.failure = "failed", redact(str(exc))
                    return outcome
                finally:
                    self._activity(None)
                for hook in self.hooks:
                    hook.on_reply(reply)
                self.add({"role": "assistant", "content": reply.content})
                outcome.last_text = reply.text().strip() or outcome.last_text
                if reply.stopped:  # cut off mid-reply at a cap: its tool calls never came
                    outcome.reason, outcome.failure = "budget_exhausted", reply.stopped
                    return outcome
                uses = reply.tool_uses()
                if not uses:
                    return outcome
                results = [self.call(use) for use in uses]
                arrived, mark_read = self.control.arrivals()
                self.add({"role": "user", "content": [*results, *arrived]})
                mark_read()
        except TurnInterrupted:
            outcome.reason = "interrupted"
            self.close_dangling("interrupted by the user")
            return outcome

    def call(self, use: dict[str, Any]) -> dict[str, Any]:
        tool = self.tools.get(use["name"])
        args = use.get("input") or {}
        if tool is None or not isinstance(args, dict):
            result = ToolResult(f"unknown tool {use['name']!r}; you have: "
                                f"{', '.join(self.tools)}" if tool is None
                                else "tool input must be an object", is_error=True)
            self._trace(f"-> {use['name']}: error: {result.content}")
        else:
            self._trace(f"-> {tool_call(tool.name, args)}")
            # Validated before anyone is asked about the call; hooks and rules see it as sent.
            try:
                parsed, problem = tool.parse(args), None
            except ToolError as exc:
                parsed, problem = None, str(exc)
            decision = None if problem else self._check(tool, args, use["id"])
            if decision is None:
                result = ToolResult(str(problem), is_error=True)
            elif decision.behavior != "allow":
                result = ToolResult(f"permission denied: {decision.reason}", is_error=True)
            else:
                if decision.updated_input is not None:  # an edited input: validated by run_tool
                    args = parsed = decision.updated_input
                self._activity(tool_call(tool.name, args))
                try:  # its output as it comes goes to the hooks (the pane)
                    env = {**self.ctx.env, **decision.env} if decision.env else self.ctx.env
                    result = run_tool(tool, parsed, replace_struct(self.ctx, output=self._output,
                                                                   env=env))
                finally:
                    self._activity(None)
                if decision.updated_input is not None:  # the model must know what really ran
                    result.content = (f"[the lead edited this call's input before approving it;"
                                      f" it ran as: {tool.describe(args)}]\n{result.content}")
            result = self.tool_hooks.post_tool_use(tool, args, result, decision)
            for hook in self.hooks:  # the pane shows it, the turn's record keeps it
                hook.on_tool_result(tool, args, result)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use["id"],
                                 "content": result.content}
        if result.is_error:
            block["is_error"] = True
        return block

    def _check(self, tool: Tool, args: dict[str, Any], use_id: str) -> Decision:
        """Its observers see the call start; what must hold for it holds (control); then "may
        it run?" is asked."""
        for hook in self.hooks:
            hook.on_tool_start(tool, args)
        self.control.before_tool(tool, args)
        return self.permits.check(tool, args, use_id)

    def close_dangling(self, why: str) -> None:
        """After an interrupt, answer every tool_use still open, so the conversation stays valid."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return
        open_uses = [b for b in self.messages[-1]["content"] if b.get("type") == "tool_use"]
        if open_uses:
            self.add({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b["id"], "content": why, "is_error": True}
                for b in open_uses]})

