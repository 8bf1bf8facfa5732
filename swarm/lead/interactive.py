"""Interactive `swarm lead` (a terminal): the person's input line stays at the bottom
(prompt_toolkit's `PromptSession` under `patch_stdout`) while the lead's text, each tool call
and each member's message print above it as they happen.

Turns run in a driver thread; the prompt runs in the main thread. Slash commands: /status,
/tasks, /inbox, /interrupt [NAME], /quit, /help. A question waiting for the person (a
teammate's permission request or plan, or the lead's own call) shows in the prompt and is
answered with y, n [reason] or a (always). Ctrl-C aborts the lead's turn; /quit, Ctrl-D, SIGHUP
(the terminal closing) or SIGTERM end the session with the shutdown handshake.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from msgspec import Struct, field

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import PermissionRequest
from swarm.core.records.state import elapsed_text
from swarm.core.text.real_input import exact_rule, shown_input
from swarm.core.text.terminal import visible, visible_line
from swarm.errors import BadInputError, NotFoundError, SwarmError
from swarm.lead.attention import left, ring_for
from swarm.lead.headless import Outcome
from swarm.lead.options import LeadOptions
from swarm.lead.process import Lead
from swarm.lead.session import Session
from swarm.lead.wake_policy import describe_request
from swarm.ops import approvals
from swarm.ops.approvals import Pending
from swarm.ops.member import control
from swarm.ops.member.health import observe
from swarm.runtime.teammate.console import brief
from swarm.runtime.tools.base import Tool

RESET, DIM, BOLD = "\x1b[0m", "\x1b[2m", "\x1b[1m"
ANSI = {"black": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35,
        "cyan": 36, "white": 37, "bright_red": 91, "bright_green": 92, "bright_yellow": 93,
        "bright_blue": 94, "bright_magenta": 95, "bright_cyan": 96}
HELP = ("/status  the team    /tasks  the task list    /inbox  your recent mail\n"
        "/interrupt [NAME]  abort the lead's turn (or NAME's)    /quit  end the session\n"
        "Ctrl-C aborts the lead's turn; Ctrl-D or /quit ends the session (teammates shut down).")


def paint(text: str, color: str | None) -> str:
    code = ANSI.get((color or "").lower())
    return f"\x1b[{code}m{text}{RESET}" if code else text


class Question(Struct, dict=True):
    """Something only the person can answer: a teammate's request, or the lead's own call."""

    text: str
    pending: Pending | None = None  # a teammate's request
    rule: str | None = None  # the lead's own call: the rule "always" adds
    answer: Decision | None = None  # the lead's own call, once answered
    answered: threading.Event = field(default_factory=threading.Event)


class TerminalUI:
    def __init__(self) -> None:
        self.questions: list[Question] = []
        self._lock = threading.Lock()
        self.app: Any = None  # the prompt's Application, to redraw it from other threads
        self.lead: Lead | None = None

    def out(self, line: str) -> None:
        """Every line the console prints: team data in it shows its control characters as
        escapes; only our own colours stay (each method makes its data visible first, too)."""
        with contextlib.suppress(OSError, ValueError):  # the terminal may be gone (SIGHUP)
            print(visible(line, styles=True), flush=True)

    def redraw(self) -> None:
        if self.app is not None:
            with contextlib.suppress(Exception):
                self.app.invalidate()

    # -- LeadUI ------------------------------------------------------------------------------
    def lead_text(self, text: str) -> None:
        self.out(f"{BOLD}lead{RESET}: {visible(text)}")

    def tool_line(self, line: str) -> None:
        self.out(f"{DIM}  {visible(brief(line.strip(), 160))}{RESET}")

    def message(self, sender: str, color: str | None, text: str) -> None:
        self.out(f"{paint(visible(sender), color)}: {visible(brief(text, 160))}")

    def notice(self, text: str) -> None:
        self.out(f"{DIM}- {visible(brief(text, 200))}{RESET}")

    def request(self, pending: Pending) -> None:
        verb = "run" if isinstance(pending.request, PermissionRequest) else "do"
        # Whole (to the shared limit), never cut to fit: the person decides on what it shows.
        question = Question(f"{pending.message.sender} wants to {verb}:"
                            f" {describe_request(pending)}", pending=pending)
        with self._lock:
            self.questions.append(question)
        self.out(f"{BOLD}{question.text}{RESET} - answer y, n [reason] or a (always);"
                 f" {left(pending)}")
        self.redraw()
        if self.lead is not None:
            ring_for(self.lead.team.name, pending)

    def resolved(self, pending: Pending) -> None:
        with self._lock:
            self.questions = [q for q in self.questions
                              if q.pending is None or q.pending.message.id != pending.message.id]
        self.redraw()

    def ask(self, tool: Tool, args: dict[str, Any], why: Decision) -> Decision | None:
        """The lead's own call: wait for the person (or an interrupt, which denies it)."""
        question = Question(f"the lead wants to run: {shown_input(tool.name, args)}",
                            rule=self._exact_rule(tool.name, args))
        with self._lock:
            self.questions.insert(0, question)  # the lead waits on it: first in line
        self.out(f"{BOLD}{question.text}{RESET} ({why.reason}) - answer y, n [reason] or a")
        self.redraw()
        lead = self.lead
        while not question.answered.wait(0.1):
            if lead is not None and lead.interrupted():
                with self._lock:
                    self.questions = [q for q in self.questions if q is not question]
                self.redraw()
                return Decision("deny", "interrupted before the person answered")
        return question.answer

    def _exact_rule(self, tool_name: str, args: dict[str, Any]) -> str | None:
        """The rule `a` adds for the lead's own call: exactly that call, or none (a blank
        command, a tool no rule narrower than the whole names)."""
        cwd = self.lead.cwd if self.lead is not None else Path.cwd()
        try:
            return exact_rule(tool_name, args, cwd)
        except BadInputError:
            return None

    # -- the prompt ---------------------------------------------------------------------------
    def prompt_text(self) -> str:
        with self._lock:
            first = self.questions[0] if self.questions else None
        if first is not None:
            return f"{first.text} [y/n/a] > "
        return busy_prompt(self.lead)

    def answer(self, line: str) -> bool:
        """Answer the first question with y / n [reason] / a; False when `line` is no answer."""
        word, _, rest = line.strip().partition(" ")
        verdict = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "a": "always",
                   "always": "always"}.get(word.lower())
        with self._lock:
            first = self.questions[0] if self.questions else None
            if verdict is None or first is None:
                return False
            self.questions.pop(0)
        reason = rest.strip() or "denied by the person"
        if first.pending is None:  # the lead's own call
            first.answer = (Decision("deny", f"the person said no: {reason}") if verdict == "no"
                            else Decision("allow", "approved by the person"))
            if verdict == "always" and self.lead is not None and first.rule:
                self.out(f"- adding a rule for this session: {first.rule}")
                self.lead.policy.member.allow_rules.append(first.rule)  # this session only
            elif verdict == "always":
                self.out("- approved once: no rule names exactly this call")
            first.answered.set()
        elif not self._answer_teammate(first.pending, verdict, reason):
            with self._lock:  # refused, still pending: the person answers it again (n, or y)
                self.questions.insert(0, first)
        self.redraw()
        return True

    def _answer_teammate(self, pending: Pending, verdict: str, reason: str) -> bool:
        """True when the request is settled (answered, or gone)."""
        lead = self.lead
        assert lead is not None
        team, sender = lead.team, pending.message.sender
        try:
            if isinstance(pending.request, PermissionRequest):
                if verdict == "no":
                    approvals.deny_permission(team, pending.request.request_id, reason)
                else:
                    approvals.approve_permission(
                        team, pending.request.request_id, always=verdict == "always",
                        announce=lambda rule: self.out(f"- adding team rule: {rule}"))
            else:
                approvals.answer_plan(team, sender, approve=verdict != "no",
                                      feedback=None if verdict != "no" else reason)
        except SwarmError as exc:
            self.notice(f"not answered: {exc}")
            return isinstance(exc, NotFoundError)  # gone (answered elsewhere): not asked again
        # Answered: the line that says how the request ended comes once, from the wake policy
        # (for every way it can end: here, from a shell, or at its timeout).
        return True


def busy_prompt(lead: Lead | None) -> str:
    """The prompt while the lead works: what it does and for how long (`thinking 12s`), redrawn
    each second by the prompt (its refresh_interval)."""
    if lead is None or not lead.in_turn:
        return "> "
    what, since = lead.state.activity, lead.state.activity_since
    if not what or since is None:
        return "(lead working) > "
    shown = "thinking" if what == "thinking" else f"running {brief(visible_line(what), 40)}"
    return f"(lead {shown} {elapsed_text(time.time() - since)}) > "


# -- slash commands ---------------------------------------------------------------------------
def status_text(lead: Lead) -> str:
    rows = observe(lead.team, include_lead=True)
    lines = [f"team {lead.team.name}"]
    for s in rows:
        task = f" #{s.current_task}" if s.current_task else ""
        detail = f" ({s.detail})" if s.detail and s.state in ("dead", "exited") else ""
        lines.append(f"  {paint(s.name, s.color)}: {s.state}{detail}{task}  unread {s.unread},"
                     f" turns {s.turns}, tokens {s.tokens}, ${s.cost_usd:.4f}")
    if len(rows) <= 1:
        lines.append("  (no teammates yet)")
    return "\n".join(lines)


def tasks_text(lead: Lead) -> str:
    tasks = lead.team.tasks.list()
    if not tasks:
        return "(no tasks)"
    return "\n".join(f"  #{t.id} [{t.status}] {t.owner or '-'}"
                     + (f" blocked_by={','.join(t.blocked_by)}" if t.blocked_by else "")
                     + f" {t.subject}" for t in tasks)


def inbox_text(lead: Lead) -> str:
    messages = lead.team.inbox(LEAD_NAME, checked=False).messages(include_archive=True)[-10:]
    if not messages:
        return "(no messages)"
    out = []
    for m in messages:
        kind = m.structured()
        shown = kind.type if kind is not None else (m.summary or m.text)
        out.append(f"  {m.timestamp[11:19]} {m.sender}{'' if m.read else ' (unread)'}:"
                   f" {brief(shown, 100)}")
    return "\n".join(out)


def command(session: Session, ui: TerminalUI, line: str) -> None:
    lead = session.lead
    name, _, arg = line[1:].strip().partition(" ")
    name = name.lower()
    if name in ("quit", "exit", "q"):
        session.request_end("the person ended the session")
    elif name == "status":
        ui.out(status_text(lead))
    elif name == "tasks":
        ui.out(tasks_text(lead))
    elif name == "inbox":
        ui.out(inbox_text(lead))
    elif name == "interrupt":
        if arg.strip():
            try:
                ui.notice(control.interrupted_line(control.interrupt(lead.team, arg.strip())))
            except SwarmError as exc:
                ui.notice(str(exc))
        elif not lead.interrupt():  # one that was in a turn: its end says "turn interrupted"
            ui.notice("the lead is not in a turn")
    elif name == "help":
        ui.out(HELP)
    else:
        ui.notice(f"unknown command /{name}: try /help")


# -- the session ------------------------------------------------------------------------------
def drive(session: Session, prompt: str | None, ui: TerminalUI) -> None:
    lead = session.lead
    try:
        wake = session.first_input(prompt) if prompt else None
        while not session.ending.is_set():
            if wake is None:
                wake = session.wait(interactive=True)
                if wake is None:
                    break
            outcome = lead.turn(wake)
            wake = None
            if outcome.reason == "interrupted" and not session.ending.is_set():
                ui.notice("turn interrupted")
            elif outcome.reason in ("failed", "budget_exhausted"):
                ui.notice(f"the lead's turn stopped: {outcome.failure or outcome.reason}")
    except Exception as exc:  # never leave the person at a dead prompt
        ui.notice(f"the lead failed: {type(exc).__name__}: {exc}")
        session.request_end(f"the lead failed: {exc}")
    finally:
        close_prompt(ui)


def close_prompt(ui: TerminalUI) -> None:
    app = ui.app
    if app is not None and app.is_running and app.loop is not None:
        with contextlib.suppress(RuntimeError):
            app.loop.call_soon_threadsafe(lambda: app.exit(exception=EOFError()))


def prompt_loop(session: Session, ui: TerminalUI, prompt_session: Any) -> None:
    """Read the person's lines until the session ends (/quit, Ctrl-D, a signal, the end)."""
    lead = session.lead
    while not session.ending.is_set():
        try:
            line = prompt_session.prompt(ui.prompt_text)
        except KeyboardInterrupt:  # Ctrl-C: the lead's turn, never the session
            if not lead.interrupt():  # a turn's end says "turn interrupted": one line
                ui.notice("nothing to interrupt: /quit or Ctrl-D ends the session")
            continue
        except EOFError:
            return
        text = line.strip()
        if not text or ui.answer(text):
            continue
        if text.startswith("/"):
            command(session, ui, text)
        else:
            lead.person.put(text)


def run_interactive(options: LeadOptions, prompt: str | None) -> Outcome:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.patch_stdout import patch_stdout

    ui = TerminalUI()
    lead = Lead(options, ui)
    ui.lead = lead
    session = Session(lead)
    # refresh_interval: the prompt redraws each second, so the elapsed time in it goes on
    prompt_session: PromptSession[str] = PromptSession(refresh_interval=1.0)
    ui.app = prompt_session.app

    def end(signum: int, frame: FrameType | None) -> None:
        session.request_end("the terminal closed (SIGHUP)" if signum == signal.SIGHUP
                            else "terminated (SIGTERM)")
        close_prompt(ui)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        lead.interrupt()

    previous = {sig: signal.signal(sig, handler) for sig, handler in
                ((signal.SIGHUP, end), (signal.SIGTERM, end), (signal.SIGINT, interrupt))}
    ui.out(f"swarm lead: team {lead.team.name} (lead {lead.model_spec}; teammates on"
           f" {lead.backend.backend}). Type a request; /help for commands, Ctrl-D to end.")
    driver = threading.Thread(target=drive, args=(session, prompt, ui), name="lead-turns",
                              daemon=True)
    try:
        lead.start()
        try:
            with patch_stdout(raw=True):
                driver.start()
                prompt_loop(session, ui, prompt_session)
                session.request_end(session.end_reason or "the person ended the session")
                driver.join(timeout=30)
                ui.out("ending the session: asking teammates to shut down...")
        except OSError:  # the terminal went away (SIGHUP): end the session all the same
            if not session.ending.is_set():
                raise
    finally:
        session.request_end(session.end_reason or "the session ended")
        report = session.end()
        for sig, old in previous.items():
            signal.signal(sig, old)
    code = 124 if session.timed_out else 0
    return Outcome(code, report, "timed out" if session.timed_out else None)
