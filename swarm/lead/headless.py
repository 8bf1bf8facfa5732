"""Headless `swarm lead` (`--headless`, or standard input not a terminal): a CI step.

Runs PROMPT and ends when the lead ends a turn with the team quiet (and nothing left to tell
it), or at `--timeout`. Prints the lead's final text, or with `--json` one JSON object. Exit codes:
0 done; 1 the lead or a teammate failed, or tasks are left unfinished; 124 timeout. Progress goes
to stderr, one line per event, so a CI log shows what happened.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO

from msgspec import Struct

from swarm import settings
from swarm.core.records.permissions import Decision
from swarm.core.records.protocol import PermissionRequest
from swarm.core.records.state import elapsed_text
from swarm.core.team.attention import until
from swarm.core.text.real_input import SHOWN_LIMIT
from swarm.core.text.terminal import visible
from swarm.errors import BadInputError
from swarm.lead.attention import deadline, ring_for
from swarm.lead.options import LeadOptions
from swarm.lead.process import Lead
from swarm.lead.session import Report, Session
from swarm.lead.wake_policy import describe_request
from swarm.ops.approvals import Pending
from swarm.runtime.teammate.console import brief
from swarm.runtime.tools.base import Tool


class ProgressUI:
    """One line per event on stderr: `HH:MM:SS who: what`."""

    def __init__(self, stream: TextIO | None = None, team: str = "") -> None:
        self.stream = stream
        self.team = team  # for the notify command's data

    def _line(self, who: str, text: str, limit: int = 200) -> None:
        stream = self.stream or sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(visible(f"{time.strftime('%H:%M:%S')} {who}: {brief(text, limit)}\n"))
            stream.flush()

    def lead_text(self, text: str) -> None:
        self._line("lead", text)

    def tool_line(self, line: str) -> None:
        self._line("lead", line.strip())

    def message(self, sender: str, color: str | None, text: str) -> None:
        self._line(sender, text)

    def notice(self, text: str) -> None:
        self._line("swarm", text)

    def request(self, pending: Pending) -> None:
        rid = pending.request.request_id
        how = (f"swarm permissions approve {rid[:8]}"
               if isinstance(pending.request, PermissionRequest)
               else f"swarm plans approve {pending.message.sender}")
        # Not cut to the usual width: whoever answers decides on what this line shows.
        self._line(pending.message.sender, f"asks: {describe_request(pending)} (answer from a"
                   f" shell: `{how}`; denied {until(deadline(pending))} otherwise)",
                   limit=SHOWN_LIMIT + 200)
        ring_for(self.team, pending)

    def resolved(self, pending: Pending) -> None:
        pass

    def ask(self, tool: Tool, args: dict[str, Any], why: Decision) -> Decision | None:
        return None  # nobody at a terminal

    def follow(self, lead: Lead) -> None:
        """No screen to redraw: a line when the lead's model call or command has run
        SWARM_PROGRESS_EVERY seconds, and again each as long after (a CI log shows it lives)."""
        threading.Thread(target=self._still, args=(lead, settings.progress_every()),
                         name="progress", daemon=True).start()

    def _still(self, lead: Lead, every: float) -> None:
        current, said = None, 0
        while True:
            time.sleep(min(every, 1.0))
            what, since = lead.state.activity, lead.state.activity_since
            if not what or since is None:
                continue
            if (what, since) != current:
                current, said = (what, since), 0
            ran = time.time() - since
            if ran >= (said + 1) * every:
                said = int(ran // every)
                shown = "thinking" if what == "thinking" else f"running {what}"
                self._line("lead", f"still {shown} ({elapsed_text(said * every)})")


class Outcome(Struct, dict=True):
    code: int
    report: Report | None
    error: str | None = None


@contextlib.contextmanager
def ending_signals(session: Session, hangup: bool = True) -> Iterator[None]:
    """SIGINT, SIGTERM (and SIGHUP) end the session with the shutdown handshake."""
    names: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}
    if hangup:
        names[signal.SIGHUP] = "the terminal closed (SIGHUP)"

    def handler(signum: int, frame: FrameType | None) -> None:
        session.request_end(names.get(signum, f"signal {signum}"))

    previous = {sig: signal.signal(sig, handler) for sig in names}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def drive(session: Session, prompt: str) -> None:
    """Turns until the session is over: the prompt, then whatever wakes the lead."""
    lead = session.lead
    wake = session.first_input(prompt)
    while not session.over():
        outcome = lead.turn(wake)
        if outcome.reason in ("failed", "budget_exhausted"):
            lead.ui.notice(f"the lead stopped: {outcome.failure or outcome.reason}")
            return
        next_wake = session.wait(interactive=False)
        if next_wake is None:
            return
        wake = next_wake


def run_headless(options: LeadOptions, prompt: str | None, ui: ProgressUI | None = None) -> Outcome:
    """Run one headless session; the caller prints the outcome (see `print_outcome`)."""
    if not (prompt or "").strip() and not options.resume:
        raise BadInputError("--headless needs a PROMPT (an argument, or on standard input)")
    progress = ui or ProgressUI()
    lead = Lead(options, progress)
    progress.team = lead.team.name
    progress.follow(lead)
    session = Session(lead)
    progress.notice(f"team {lead.team.name}: lead {lead.model_spec}, teammates on"
                    f" {lead.backend.backend} ({lead.backend.reason})")
    with ending_signals(session):
        try:
            lead.start()
            drive(session, prompt or "You were resumed: carry on with the team's work.")
        finally:
            report = session.end()
    if session.timed_out:
        return Outcome(124, report, f"timed out after {options.timeout:g}s")
    if session.end_reason and not session.timed_out:
        return Outcome(130 if session.end_reason == "interrupted" else 1, report,
                       session.end_reason)
    if report.problems:
        return Outcome(1, report, "; ".join(report.problems))
    return Outcome(0, report)


def print_outcome(outcome: Outcome, as_json: bool, out: TextIO | None = None) -> None:
    stream = out or sys.stdout
    if outcome.report is not None:
        if as_json:
            stream.write(json.dumps(outcome.report.as_dict(), indent=2) + "\n")
        elif outcome.report.final_text:
            stream.write(visible(outcome.report.final_text.rstrip()) + "\n")
        stream.flush()
