"""One lead session: wait for what wakes the lead, run its turns, and end the session (any way
it ends: every teammate gets a shutdown_request, those still running after
SWARM_SHUTDOWN_GRACE are killed, the lead's subagents are stopped, its SessionEnd hooks run, the
run report is written with --report, and the team is deleted unless --keep).

Waiting costs no model calls: the session sleeps on inotify over the team's mailboxes, tasks and
teammates' state files, looks at the team when one changes (and every few seconds, to notice a
death or a request's timeout), and checks the person's input queue every 50 ms. A background
subagent of the lead that ends sets the runner's waker, which ends the wait at once.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.task import ENDED
from swarm.core.store.api import Watcher
from swarm.core.store.disk import write_bytes_atomic
from swarm.core.team.state import read_state
from swarm.errors import SwarmError, describe_error
from swarm.lead.process import Lead
from swarm.lead.team_view import LOOK_EVERY, lead_watcher
from swarm.lead.wake_policy import Wake
from swarm.ops.member import control
from swarm.ops.member.health import observe
from swarm.ops.member.shutdown import shutdown
from swarm.ops.report.build import build_report
from swarm.ops.report.html import render_html

log = logging.getLogger(__name__)
PERSON_POLL = 0.05  # seconds between checks of the person's input (interactive)


class Report(Struct, dict=True):
    """What `--json` prints: the session's object, plus the exit code's reasons."""

    team: str
    final_text: str
    tasks: list[dict[str, Any]]
    members: list[dict[str, Any]]
    lead: dict[str, Any]
    cost_usd: float
    duration_s: float
    problems: list[str] = field(default_factory=list)  # why the exit code is 1 (not in --json)
    wakes: dict[str, int] = field(default_factory=dict)  # lead turns by what started them

    def as_dict(self) -> dict[str, Any]:
        return {"team": self.team, "final_text": self.final_text, "tasks": self.tasks,
                "members": self.members, "lead": self.lead, "cost_usd": self.cost_usd,
                "duration_s": self.duration_s}


class Session:
    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.started = time.monotonic()
        timeout = lead.options.timeout
        self.deadline = None if timeout is None else self.started + timeout
        self.ending = threading.Event()
        self.end_reason = ""
        self.timed_out = False
        self.turns_by_reason: dict[str, int] = {}

    # -- ending ----------------------------------------------------------------------------------
    def request_end(self, why: str) -> None:
        """From anywhere (a signal handler, the prompt): stop after or during the current turn."""
        if not self.ending.is_set():
            self.end_reason = why
            self.ending.set()
        self.lead.interrupt()

    def over(self) -> bool:
        if self.ending.is_set():
            return True
        if self.lead.team_deleted:  # the lead's own choice: a normal end, not a failure
            return True
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
            self.request_end(f"timed out after {self.lead.options.timeout:g}s")
            return True
        return False

    # -- waiting ---------------------------------------------------------------------------------
    def watcher(self) -> Watcher:
        """Mailboxes, tasks and every teammate's state file (not the lead's own heartbeat)."""
        return lead_watcher(self.lead.team, self.lead.subagents.waker)

    def wait(self, interactive: bool) -> Wake | None:
        """Block until something should start a lead turn. None: the session is over (ended,
        timed out, or, headless, the team is quiet with nothing left to tell the lead)."""
        watch = self.lead.watch
        with self.watcher() as watcher:
            changed, last_look = True, 0.0
            while not self.over():
                try:
                    text: str | None = self.lead.person.get_nowait()
                except queue.Empty:
                    text = None
                if text is not None:
                    return self._count(watch.input_for(text))
                now = time.monotonic()
                due = watch.look_again_by()  # held reports are due then (lead.settle)
                if changed or now - last_look >= LOOK_EVERY or (due is not None and now >= due):
                    last_look = now
                    wake = watch.next_wake()
                    if wake is None and self.lead.subagents.has_arrivals():
                        wake = self.lead.subagent_wake()
                    if wake is not None:
                        return self._count(wake)
                    if not interactive and watch.finished() and not self.subagents_running():
                        return None
                pause = PERSON_POLL if interactive else LOOK_EVERY
                due = watch.look_again_by()
                if due is not None:
                    pause = max(0.0, min(pause, due - time.monotonic()))
                if self.deadline is not None:
                    pause = max(0.0, min(pause, self.deadline - time.monotonic()))
                changed = watcher.wait(pause)
        return None

    def subagents_running(self) -> bool:
        """Headless: a background subagent of the lead still works, so its report is to come
        (or it just ended: its notification is not taken yet). Records first: a subagent is
        recorded as ended together with its notification, so one of the two is seen."""
        subagents = self.lead.subagents
        return (any(info.status == "running" for info in subagents.records())
                or subagents.has_arrivals())

    def _count(self, wake: Wake) -> Wake:
        log.debug("lead wakes: %s", ", ".join(wake.reasons))
        for reason in set(wake.reasons) or {"none"}:
            self.turns_by_reason[reason] = self.turns_by_reason.get(reason, 0) + 1
        return wake

    def first_input(self, prompt: str) -> Wake:
        return self._count(self.lead.watch.input_for(prompt))

    # -- the end ---------------------------------------------------------------------------------
    def end(self) -> Report:
        """Shut the team down (asked, then killed after the grace), report, delete unless
        --keep. Every step on its own: one failing must not leave processes behind."""
        lead, team = self.lead, self.lead.team
        lead.interrupt()
        log.info("session of %s ends: %s", team.name, self.end_reason or "done")
        problems: list[str] = []
        detail = self.end_reason or "session ended"
        try:
            lead.subagents.stop_all(f"the lead's session ended: {detail}")  # each recorded
        except (SwarmError, OSError) as exc:
            problems.append(f"stopping the lead's subagents: {describe_error(exc)}")
        grace = settings.shutdown_grace()
        try:
            outcomes = shutdown(team, [], reason="the lead's session is over",
                                        timeout=grace, force=True)
            for outcome in outcomes:
                if outcome.result == "refused":  # asked nicely; the session still ends
                    control.stop_member(team, team.member(outcome.name), "killed at session end")
                if outcome.result in ("refused", "killed"):
                    lead.ui.notice(f"{outcome.name} {outcome.result}: {outcome.reason}")
        except SwarmError as exc:
            problems.append(f"shutting the team down: {exc}")
        report = self.report(problems)
        try:
            lead.release(detail)
        except (SwarmError, OSError) as exc:
            problems.append(f"releasing the team: {describe_error(exc)}")
        if lead.options.report is not None:
            self.write_report(lead.options.report, problems)
        try:  # after the team's shutdown and the report, before the team's files go
            lead.end_extensions(detail)
        except (SwarmError, OSError) as exc:
            problems.append(f"SessionEnd hooks: {describe_error(exc)}")
        if lead.options.keep and not lead.team_deleted:
            lead.ui.notice(f"team {team.name} kept: continue with `swarm lead --resume --team"
                           f" {team.name}`")
        else:
            try:
                control.delete_team(team.name, force=True)
                lead.ui.notice(f"team {team.name} deleted")
            except (SwarmError, OSError) as exc:
                problems.append(f"deleting team {team.name}: {describe_error(exc)}")
                lead.ui.notice(f"team {team.name} not deleted: {describe_error(exc)}")
        return report

    def write_report(self, path: Path, problems: list[str]) -> None:
        """--report FILE: the run report page (`swarm report --html`), before the team goes."""
        try:
            page = render_html(build_report(self.lead.team.name))
            write_bytes_atomic(path, page.encode())
            self.lead.ui.notice(f"wrote the run report to {path}")
        except (SwarmError, OSError) as exc:
            problems.append(f"writing the run report to {path}: {describe_error(exc)}")
            self.lead.ui.notice(f"the run report was not written: {describe_error(exc)}")

    def report(self, problems: list[str]) -> Report:
        lead, team = self.lead, self.lead.team
        tasks = team.tasks.list()
        members: list[dict[str, Any]] = []
        for status in observe(team):
            state = read_state(team.name, status.name)
            usage = state.usage if state else None
            members.append({"name": status.name, "state": status.state, "turns": status.turns,
                            "usage": records.to_dict(usage) if usage else {},
                            "cost_usd": status.cost_usd})
            note = lead.watch.latest.get(status.name)
            if status.state == "dead" and not lead.team_deleted:  # TeamDelete stopped it
                problems.append(f"{status.name} died: {status.detail}")
            elif note is not None and note.idle_reason == "failed":
                problems.append(f"{status.name} failed: {note.failure_reason}")
        outcome = lead.last_outcome
        if outcome is not None and outcome.reason == "failed":
            problems.append(f"the lead failed: {outcome.failure}")
        elif outcome is not None and outcome.reason == "budget_exhausted":
            problems.append("the session's budget (--max-budget-usd) is spent")
        failed = [t.id for t in tasks if t.status == "failed"]
        if failed:
            problems.append(f"failed tasks: {', '.join('#' + i for i in failed)}")
        unfinished = [t.id for t in tasks if t.status not in ENDED]
        if unfinished:
            problems.append(f"unfinished tasks: {', '.join('#' + i for i in unfinished)}")
        usage = lead.state.usage
        lead_row = {"turns": lead.state.turns, "usage": records.to_dict(usage),
                    "cost_usd": round(usage.cost_usd, 6)}
        total = round(usage.cost_usd + sum(float(m["cost_usd"]) for m in members), 6)
        return Report(team=team.name, final_text=lead.final_text,
                      tasks=[records.to_dict(t) for t in tasks], members=members,
                      lead=lead_row, cost_usd=total,
                      duration_s=round(time.monotonic() - self.started, 3), problems=problems,
                      wakes=dict(self.turns_by_reason))
