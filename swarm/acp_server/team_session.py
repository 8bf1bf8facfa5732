"""One ACP session: a team and its lead (the headless lead's `Lead` and `Session`), kept for the
editor across prompts.

A prompt's turn is the headless lead's run: the prompt is the lead's input, its turns follow
whatever wakes it, and the turn ends when the lead has ended a turn with the team quiet (ACP
version 1 has no updates outside a turn, so the turn stays open while the team works). The
team stays up between prompts; the editor's cancel interrupts the lead's turn and every
teammate's. A watcher thread follows the team the whole time: the task list goes to the editor
as the session's `plan` (at once during a turn, at the next turn's start otherwise), and a
teammate's request waits for the next turn (requests)."""

from __future__ import annotations

import contextlib
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import acp

from swarm.core.records.names import LEAD_NAME
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.errors import SwarmError, describe_error
from swarm.lead.options import LeadOptions
from swarm.lead.process import Lead
from swarm.lead.session import Session
from swarm.lead.team_view import lead_watcher
from swarm.ops.member import control
from swarm.ops.member.health import observe

from .link import HISTORY_NAME, EditorLink
from .reach import EditFollower, editor_servers, give_to_lead
from .requests import TeammateRequests
from .view import EditorUI, plan_of

if TYPE_CHECKING:
    from swarm.lead.process import LeadUI

log = logging.getLogger(__name__)
LOOK_EVERY = 1.0  # seconds: the watcher also looks this often (a request's arrival by rename)


class PromptSession(Session):
    """The headless lead's session, over for one prompt when the editor cancels."""

    def __init__(self, lead: Lead) -> None:
        super().__init__(lead)
        self.cancelled = threading.Event()

    def over(self) -> bool:
        return self.cancelled.is_set() or super().over()


class TeamSession:
    def __init__(self, options: LeadOptions, link_for: Any, mcp_servers: list[Any]) -> None:
        """`link_for(team_name, history_path)` makes the session's EditorLink (the team's name
        is the session id); `mcp_servers`: the editor's, for the lead."""
        holder = _LazyUI()
        self.lead = Lead(options, cast("LeadUI", holder))  # creates or opens the team
        try:
            self._build(holder, link_for, mcp_servers)
        except BaseException:  # a session never answered: its lead gone, a new team too
            with contextlib.suppress(SwarmError, OSError):
                self.lead.extensions.close()  # an editor's MCP server already started
                self.lead.release("the session did not start")
                if not options.resume:
                    Team.delete(self.lead.team.name, force=True)
            raise

    def _build(self, holder: _LazyUI, link_for: Any, mcp_servers: list[Any]) -> None:
        history = paths.agent_dir(self.lead.team.name, LEAD_NAME) / HISTORY_NAME
        self.link: EditorLink = link_for(self.lead.team.name, history)
        self.ui = holder.bind(self.link, self.lead.cwd)
        self.ui.allow_rules = self.lead.policy.member.allow_rules
        self.ui.interrupted = self.lead.interrupted
        self.requests = TeammateRequests(self.lead.team, self.link, self.lead.cwd)
        self.ui.offer_request = self.requests.offer
        self.lead.loop.hooks = (*self.lead.loop.hooks, self.ui.view)
        # The lead's own task calls: the plan at once, before what it does next (a spawn).
        self.ui.view.after_tool = lambda name: (self._send_plan(force=False)
                                                if name.startswith("Task") else None)
        self.session = PromptSession(self.lead)
        self.id = self.lead.team.name
        self.ended = False
        self._plan: list[tuple[str, str]] | None = None
        self._plan_lock = threading.Lock()
        self._stop = threading.Event()
        self._busy = threading.Lock()  # one prompt at a time
        self.lead.start()
        self.abort = threading.Event()  # a running MCP call of the lead ends on cancel
        give_to_lead(self.lead, editor_servers(mcp_servers, self.ui.notice), self.abort)
        self.edits = EditFollower(self.lead, self.link)
        notice = self.lead.trust.notice()
        self.untrusted = f"swarm: {notice}" if notice else ""  # said once, in the first answer
        self._watcher = threading.Thread(target=self._watch, name=f"acp-{self.id}", daemon=True)
        self._watcher.start()

    # -- a prompt --------------------------------------------------------------------------------
    def run_prompt(self, text: str) -> str:
        """The prompt's turn, to its end (in a worker thread): its stop reason."""
        if self.ended:
            raise SwarmError("this session's team has ended; start a new session")
        with self._busy:
            session, lead = self.session, self.lead
            session.cancelled.clear()
            self.abort.clear()
            if self.untrusted:  # once, at the head of the session's first answer
                self.link.send(acp.update_agent_message_text(self.untrusted + "\n\n"))
                self.untrusted = ""
            self.link.send(acp.update_user_message_text(text), show=False)  # for a replay
            if lead.watch.approvals == "human":
                self.requests.look()  # what is pending now, whether the watcher saw it or not
            self.requests.open_turn()
            self._send_plan(force=False)
            self.edits.look()  # what teammates edited between turns
            try:
                wake = session.first_input(text)
                while not session.over():
                    outcome = lead.turn(wake)
                    if outcome.reason in ("failed", "budget_exhausted"):  # said as its answer
                        self.link.send(acp.update_agent_message_text(
                            f"swarm: the lead stopped: {outcome.failure or outcome.reason}\n"))
                        break
                    next_wake = session.wait(interactive=False)
                    if next_wake is None:
                        break
                    wake = next_wake
            finally:
                self.edits.look()
                self.requests.close_turn()
                self._send_plan(force=False)
            if lead.team_deleted:
                self.end("the lead deleted the team")
            return "cancelled" if session.cancelled.is_set() else "end_turn"

    def cancel(self) -> None:
        """`session/cancel`: the lead's turn and every teammate's turn are interrupted."""
        self.session.cancelled.set()
        self.abort.set()
        self.lead.interrupt()
        try:
            for status in observe(self.lead.team):
                if status.state == "working":
                    try:
                        control.interrupt(self.lead.team, status.name)
                    except SwarmError as exc:
                        log.debug("%s not interrupted: %s", status.name, exc)
        except SwarmError as exc:
            log.warning("teammates not interrupted: %s", describe_error(exc))

    # -- the watcher -----------------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                with lead_watcher(self.lead.team) as watcher:
                    while not self._stop.is_set():
                        watcher.wait(LOOK_EVERY)
                        self._look()
            except (SwarmError, OSError) as exc:  # the team went away, or a file did
                log.debug("watcher: %s", exc)
                self._stop.wait(LOOK_EVERY)

    def _look(self) -> None:
        if self.requests.turn_open:
            self._send_plan(force=False)
            self.edits.look()
        elif self.lead.watch.approvals == "human":
            self.requests.look()  # between turns: held for the next turn

    def _send_plan(self, force: bool) -> None:
        with self._plan_lock:
            try:
                tasks = self.lead.team.tasks.list()
            except SwarmError:
                return
            shape = [(t.id, t.subject + t.status) for t in tasks]
            if (shape == self._plan and not force) or (not tasks and self._plan is None):
                return
            self._plan = shape
            self.link.send(plan_of(tasks))

    # -- the end ---------------------------------------------------------------------------------
    def end(self, why: str = "the editor closed the session") -> None:
        """Teammates shut down, the team kept (the editor may load it again)."""
        if self.ended:
            return
        self.ended = True
        self._stop.set()
        self.session.request_end(why)
        try:
            self.session.end()
        except (SwarmError, OSError) as exc:
            log.warning("the session of %s did not end cleanly: %s", self.id, describe_error(exc))


class _LazyUI:
    """The Lead needs its UI before the team (and so the editor link) exists: notices said
    while it is built are kept and sent once the link is there."""

    def __init__(self) -> None:
        self.real: EditorUI | None = None
        self.early: list[str] = []

    def bind(self, link: EditorLink, cwd: Path) -> EditorUI:
        self.real = EditorUI(link, cwd)
        for text in self.early:
            self.real.notice(text)
        return self.real

    def __getattr__(self, name: str) -> Any:
        if self.real is None:
            if name == "notice":
                return self.early.append
            return lambda *args, **kwargs: None
        return getattr(self.real, name)
