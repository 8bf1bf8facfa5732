"""Teammates' requests that need a person (a permission, a plan), put to the editor as
`session/request_permission`, and only there: allow once, always (the exact rule, added to the
team as `swarm permissions approve --always` does), reject.

ACP version 1 has no place for a request outside a prompt's turn. A request that arrives while
no turn is open waits in order and goes out at the start of the next prompt's turn, before the
lead runs; one the editor answers "cancelled" (the turn was cancelled) stays pending and goes out
again at the next turn. A request answered elsewhere first (`swarm permissions` from a shell, its
timeout) is simply gone when the editor's answer comes."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import acp
from acp.schema import PermissionOption, ToolCallUpdate

from swarm.core.records.protocol import PermissionRequest
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.ops import approvals
from swarm.ops.approvals import Pending

from .link import EditorLink, in_own_thread
from .view import KINDS, edit_content

log = logging.getLogger(__name__)
REJECTED = "the person rejected it in the editor"
SEND_WAIT = 5.0  # seconds a turn's start waits for a held question to go out (a stuck editor)
PERMISSION_OPTIONS = [
    PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="always", name="Always (a team rule for exactly this)",
                     kind="allow_always"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once")]
PLAN_OPTIONS = [PermissionOption(option_id="approve", name="Approve the plan", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject the plan", kind="reject_once")]


class TeammateRequests:
    def __init__(self, team: Team, link: EditorLink, cwd: Path) -> None:
        self.team = team
        self.link = link
        self.cwd = cwd
        self.turn_open = False
        self._lock = threading.Lock()
        self._offered: set[str] = set()  # message ids sent to the editor, not yet answered
        self._waiting: list[Pending] = []  # arrived between turns, in order

    def offer(self, pending: Pending, sent: threading.Event | None = None) -> None:
        """From any thread: ask the editor now (a turn is open) or at the next turn's start.
        `sent` is set once the question is on its way (or will not be)."""
        with self._lock:
            key = pending.message.id
            if key in self._offered or any(p.message.id == key for p in self._waiting):
                if sent is not None:
                    sent.set()
                return
            if not self.turn_open:
                self._waiting.append(pending)
                return
            self._offered.add(key)
        self.link.run(self._ask(pending, sent))

    def look(self) -> None:
        """Every request pending in the team now (the between-turn watcher calls this)."""
        try:
            found = approvals.pending_permissions(self.team) + approvals.pending_plans(self.team)
        except SwarmError as exc:
            log.debug("pending requests not read: %s", exc)
            return
        for pending in sorted(found, key=lambda p: p.message.timestamp):
            self.offer(pending)

    def open_turn(self) -> None:
        """A prompt's turn starts: what waited goes out first, in order, before the lead runs."""
        with self._lock:
            self.turn_open = True
            waiting, self._waiting = self._waiting, []
        sent = [threading.Event() for _ in waiting]
        for pending, event in zip(waiting, sent, strict=True):
            self.offer(pending, event)
        for event in sent:
            event.wait(SEND_WAIT)

    def close_turn(self) -> None:
        with self._lock:
            self.turn_open = False

    async def _ask(self, pending: Pending, sent: threading.Event | None) -> None:
        call = tool_call_of(pending, self.cwd)
        self.link.send(acp.start_tool_call(call.tool_call_id, call.title or "", kind=call.kind,
                                           status="pending", raw_input=call.raw_input,
                                           content=call.content, locations=call.locations))
        is_plan = not isinstance(pending.request, PermissionRequest)
        kind: str | None = None
        try:
            kind = await self.link.asked(call, PLAN_OPTIONS if is_plan else PERMISSION_OPTIONS,
                                         sent)
        except Exception as exc:  # the editor failed the request: it stays pending
            log.warning("the editor did not answer %s: %s", call.tool_call_id, exc)
        finally:
            if sent is not None:
                sent.set()
        if kind is None:  # cancelled: pending still, asked again at the next turn
            with self._lock:
                self._offered.discard(pending.message.id)
                self._waiting.append(pending)
            self.link.send(acp.update_tool_call(call.tool_call_id, status="pending"))
            return
        verdict = await in_own_thread(lambda: self._answer(pending, kind))
        with self._lock:
            self._offered.discard(pending.message.id)
        self.link.send(acp.update_tool_call(
            call.tool_call_id, status="completed" if kind.startswith("allow") else "failed",
            content=[acp.tool_content(acp.text_block(verdict))]))

    def _answer(self, pending: Pending, kind: str) -> str:
        sender = pending.message.sender
        try:
            if isinstance(pending.request, PermissionRequest):
                rid = pending.request.request_id
                if kind.startswith("reject"):
                    approvals.deny_permission(self.team, rid, REJECTED)
                    return f"rejected: {sender} was told no"
                ruled: list[str] = []
                approvals.approve_permission(self.team, rid, always=kind == "allow_always",
                                             announce=ruled.append)
                return f"approved; team rule added: {ruled[0]}" if ruled else "approved once"
            approvals.answer_plan(self.team, sender, approve=kind.startswith("allow"),
                                  feedback=None if kind.startswith("allow") else REJECTED)
            return "plan approved" if kind.startswith("allow") else "plan rejected"
        except SwarmError as exc:  # answered elsewhere first, or refused: say so
            return f"not answered: {exc}"


def tool_call_of(pending: Pending, cwd: Path) -> ToolCallUpdate:
    request, sender = pending.request, pending.message.sender
    if isinstance(request, PermissionRequest):
        content, locations = edit_content(request.tool_name, request.input, cwd)
        return ToolCallUpdate(
            tool_call_id=f"request-{request.request_id}",
            title=f"{sender} wants to run: {pending.shown()}",
            kind=KINDS.get(request.tool_name, "other"), status="pending",
            raw_input={"tool": request.tool_name, **request.input},
            content=content or None, locations=locations or None)
    plan: Any = getattr(request, "plan", "")
    return ToolCallUpdate(tool_call_id=f"plan-{pending.message.id}",
                          title=f"{sender} asks to approve its plan", kind="think",
                          status="pending", raw_input={"plan": plan},
                          content=[acp.tool_content(acp.text_block(str(plan)))])
