"""What the editor sees of the team: the lead's text as message chunks, each of its tool calls
(spawns, messages, tasks, its own commands and edits) as a `tool_call` and its update, members'
messages as tool calls, swarm's notices as thought chunks, the task list as the `plan`."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    PermissionOption,
    PlanEntryStatus,
    ToolCallLocation,
    ToolCallUpdate,
    ToolKind,
)

from swarm.core.records.permissions import Decision
from swarm.core.records.task import ENDED, Task
from swarm.core.text.real_input import exact_rule, shown_input
from swarm.errors import BadInputError
from swarm.ops.approvals import Pending
from swarm.runtime.models.base import ModelReply
from swarm.runtime.tools.base import Tool, ToolResult
from swarm.runtime.turn.hooks import LoopHooks

from .link import EditorLink

KINDS: dict[str, ToolKind] = {"Read": "read", "Write": "edit", "Edit": "edit", "Bash": "execute",
                              "Glob": "search", "Grep": "search", "SendMessage": "other"}
# What names a team action in its title (TaskCreate: one, SpawnTeammate: alice).
TITLE_KEYS = {"TaskCreate": "subject", "SpawnTeammate": "name", "SendMessage": "to",
              "StopTeammate": "name", "TaskGet": "task_id", "SetMode": "name",
              "Read": "file_path", "Write": "file_path", "Edit": "file_path", "Bash": "command"}
RESULT_LIMIT = 4000  # characters of a tool's result shown in its update
ASK_POLL = 0.1  # seconds between looks at the lead's interrupt while the editor decides


def title_of(tool_name: str, args: dict[str, Any]) -> str:
    if tool_name == "TaskUpdate":
        return f"TaskUpdate: #{args.get('task_id')} {args.get('status') or ''}".rstrip()
    key = TITLE_KEYS.get(tool_name)
    value = args.get(key) if key else None
    return f"{tool_name}: {value}" if isinstance(value, str) and value else tool_name


def edit_content(tool_name: str, args: dict[str, Any], cwd: Path) -> tuple[list[Any], list[Any]]:
    """A file edit's diff and location, so the editor can follow it."""
    path = args.get("file_path")
    if tool_name not in ("Write", "Edit") or not isinstance(path, str):
        return [], []
    where = str((cwd / path).resolve()) if not Path(path).is_absolute() else path
    if tool_name == "Write":
        diff = acp.tool_diff_content(where, str(args.get("content", "")), None)
    else:
        diff = acp.tool_diff_content(where, str(args.get("new_string", "")),
                                     str(args.get("old_string", "")))
    return [diff], [ToolCallLocation(path=where)]


class TurnView(LoopHooks):
    """The lead's turn, streamed: its text as it comes, each tool call and its result."""

    def __init__(self, link: EditorLink, cwd: Path) -> None:
        self.link = link
        self.cwd = cwd
        self.streamed = False  # text came in pieces for the current reply
        self._ids = itertools.count(1)
        self._calls: dict[int, str] = {}
        self.after_tool: Callable[[str], None] = lambda name: None  # the plan after a Task call

    def on_text(self, text: str) -> None:
        if text:
            self.streamed = True
            self.link.send(acp.update_agent_message_text(text))

    def on_reply(self, reply: ModelReply) -> None:
        text = reply.text()
        if text and not self.streamed:  # a model that does not stream: the whole reply
            self.link.send(acp.update_agent_message_text(text))
        if text:
            self.link.send(acp.update_agent_message_text("\n\n"))
        self.streamed = False

    def on_tool_start(self, tool: Tool, args: dict[str, Any]) -> None:
        call_id = f"lead-{next(self._ids)}"
        self._calls[id(args)] = call_id
        content, locations = edit_content(tool.name, args, self.cwd)
        self.link.send(acp.start_tool_call(
            call_id, title_of(tool.name, args), kind=KINDS.get(tool.name, "other"),
            status="in_progress", content=content or None, locations=locations or None,
            raw_input=args))

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> None:
        call_id = self._calls.pop(id(args), None)
        if call_id is None:
            return
        self.link.send(acp.update_tool_call(
            call_id, status="failed" if result.is_error else "completed",
            content=[acp.tool_content(acp.text_block(result.content[:RESULT_LIMIT]))],
            raw_output={"content": result.content[:RESULT_LIMIT], "is_error": result.is_error}))
        self.after_tool(tool.name)


class EditorUI:
    """The lead's UI (`LeadUI`) when an editor is the person."""

    def __init__(self, link: EditorLink, cwd: Path) -> None:
        self.link = link
        self.cwd = cwd
        self.view = TurnView(link, cwd)
        # A teammate's request for the person: the session's TeammateRequests.offer.
        self.offer_request: Callable[[Pending], None] = lambda pending: None
        self.allow_rules: list[str] | None = None  # the lead's own, for "always" of its calls
        self.interrupted: Callable[[], bool] = lambda: False  # the lead's turn was interrupted
        self._messages = itertools.count(1)
        self._lock = threading.Lock()

    def lead_text(self, text: str) -> None:
        pass  # streamed by the TurnView (on_text, or the whole reply)

    def tool_line(self, line: str) -> None:
        pass  # each tool call is a tool call of its own

    def message(self, sender: str, color: str | None, text: str) -> None:
        call_id = f"message-{next(self._messages)}"
        self.link.send(acp.start_tool_call(
            call_id, f"{sender}: message", kind="other", status="completed",
            content=[acp.tool_content(acp.text_block(text[:RESULT_LIMIT]))]))

    def notice(self, text: str) -> None:
        self.link.send(acp.update_agent_thought_text(f"swarm: {text}\n"))

    def request(self, pending: Pending) -> None:
        self.offer_request(pending)

    def resolved(self, pending: Pending) -> None:
        pass

    def ask(self, tool: Tool, args: dict[str, Any], why: Decision) -> Decision | None:
        """The lead's own call: the editor answers (allow once, always as a rule, reject)."""
        try:
            rule = exact_rule(tool.name, args, self.cwd)
        except BadInputError:
            rule = None
        content, locations = edit_content(tool.name, args, self.cwd)
        call = ToolCallUpdate(tool_call_id=f"lead-ask-{next(self._messages)}",
                              title=f"the lead wants to run: {shown_input(tool.name, args)}",
                              kind=KINDS.get(tool.name, "other"), status="pending",
                              raw_input=args, content=content or None,
                              locations=locations or None)
        options = [PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
                   PermissionOption(option_id="reject", name="Reject", kind="reject_once")]
        if rule is not None:
            options.insert(1, PermissionOption(option_id="always", name=f"Always: {rule}",
                                               kind="allow_always"))
        answer = self.link.ask(call, options)
        while True:
            try:
                kind = answer.result(ASK_POLL)
                break
            except TimeoutError:
                if self.interrupted():  # cancelled: the editor answers "cancelled" too
                    answer.cancel()
                    return Decision("deny", "interrupted before the person answered")
        if kind is None or kind.startswith("reject"):
            return Decision("deny", "the person said no in the editor")
        if kind == "allow_always" and rule is not None and self.allow_rules is not None:
            self.allow_rules.append(rule)  # this session only, as `a` in the terminal
        return Decision("allow", "approved by the person in the editor")


def plan_of(tasks: list[Task]) -> Any:
    entries = []
    for t in tasks:
        status: PlanEntryStatus = ("completed" if t.status in ENDED else
                                   "in_progress" if t.status == "in_progress" else "pending")
        failed = " (failed)" if t.status == "failed" else ""
        entries.append(acp.plan_entry(f"#{t.id} {t.subject}{failed}", status=status))
    return acp.update_plan(entries)
