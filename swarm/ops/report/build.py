"""`swarm report`: what a team did, read back from its files (during a run or after it).

Everything comes from disk, so a kept team, a finished one or a running one reads the same way:
each member's `transcript.jsonl` (model calls, tool calls, inputs, process events, all
timestamped), its `state.json` (turns, tokens, cost), the task files, and every mailbox with its
archive (messages, and the permission and plan requests with their answers). Each member's spans
come from `report_timeline`; this module lays them, the tasks and the messages out as plain data,
which `report_html` draws and the CLI prints as JSON.

Times are seconds since the start of the run (the team's creation or its first record).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from swarm.core.records.names import LEAD_NAME, validate_team_name
from swarm.core.records.state import AgentState
from swarm.core.records.task import Task
from swarm.core.records.team_config import Member
from swarm.core.store import paths
from swarm.core.store.disk import iso_at
from swarm.core.team import decisions
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import read_entries
from swarm.core.text.readable import flat, structured_line
from swarm.errors import NotFoundError
from swarm.ops.mail.messages import Addressed, team_messages
from swarm.ops.report.timeline import (
    Mark,
    Span,
    Track,
    dead_spans,
    epoch,
    idle_gaps,
    read_track,
    request_waits,
)

BUSY_STATES = ("starting", "working", "waiting_permission", "awaiting_plan", "shutting_down")
TEXT_CAP = 4000  # characters of a message's text kept in the report


@dataclass
class MemberRow:
    name: str
    color: str | None = None
    model: str | None = None
    state: str = "-"
    turns: int = 0
    tool_calls: int = 0
    messages_sent: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0  # output spent thinking, apart from output_tokens
    cache_tokens: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    busy_s: float = 0.0
    wall_s: float = 0.0
    dead_s: float = 0.0  # killed (or crashed) until respawned, or to the end
    # Its permission decisions (core.team.decisions.summary): by tier, the reviewer's verdicts
    # and cost, the person's waits.
    permissions: dict[str, Any] = field(default_factory=dict)


@dataclass
class Lane:
    name: str
    color: str | None
    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)


@dataclass
class TaskRow:
    id: str
    subject: str
    owner: str | None
    status: str
    claimed: float | None
    done: float | None
    took_s: float | None


@dataclass
class MessageRow:
    id: str
    at: float
    timestamp: str
    sender: str
    to: str
    kind: str  # text, or the structured message's type
    line: str
    text: str


@dataclass
class RunReport:
    team: str
    description: str
    start: str  # ISO 8601 UTC
    end: str
    duration_s: float
    generated_at: str
    members: list[MemberRow]
    totals: MemberRow
    lanes: list[Lane]
    tasks: list[TaskRow]
    messages: list[MessageRow]
    notes: list[str]
    active: bool  # some member was still busy when the report was made
    events: int  # transcript entries and messages read

    @property
    def empty(self) -> bool:
        return self.events == 0 and not self.tasks

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "empty": self.empty}


def iso(seconds: float) -> str:
    return iso_at(seconds)


def _member_names(team: Team, members: list[Member]) -> list[str]:
    """Members in the team file (lead first), then any with files on disk but no entry any more."""
    names = [LEAD_NAME, *(m.name for m in members if m.name != LEAD_NAME)]
    agents = paths.local_team_dir(team.name) / "agents"
    if agents.is_dir():
        names += sorted(p.name for p in agents.iterdir() if p.is_dir() and p.name not in names)
    return names


def build_report(team_name: str, now: float | None = None) -> RunReport:
    """Read everything the team left on disk and lay it out in time."""
    team_name = validate_team_name(team_name)
    if not Team(team_name).exists():
        raise NotFoundError(f"no team named {team_name!r} (see `swarm team list`): the report "
                            "reads a team's files, which `swarm team delete` removes; keep a "
                            "team with --keep to report on it later")
    team = Team.open(team_name)
    config = team.config()
    names = _member_names(team, config.members)
    by_name = {m.name: m for m in config.members}
    notes: list[str] = []
    tracks: dict[str, Track] = {}
    states: dict[str, AgentState | None] = {}
    events = 0
    for name in names:
        entries, bad, _ = read_entries(paths.agent_transcript(team.name, name))
        track, undated = read_track(entries)
        tracks[name] = track
        states[name] = read_state(team.name, name)
        events += len(entries)
        if bad:
            shown = ", ".join(str(n) for n in bad[:5]) + (" ..." if len(bad) > 5 else "")
            notes.append(f"{name}: skipped {len(bad)} unreadable transcript line(s) ({shown}): "
                         "torn by a crash or cut short")
        if undated:
            notes.append(f"{name}: skipped {undated} transcript entr(ies) without a timestamp")
    mailbox_items = team_messages(team, names)
    tasks = team.tasks.list()
    events += len(mailbox_items)

    # The run's extent: from the team's creation (or its first record) to its last record.
    stamps = [t for tr in tracks.values() for t in (tr.first, tr.last) if t is not None]
    stamps += [t for a in mailbox_items if (t := epoch(a.message.timestamp)) is not None]
    stamps += [t for task in tasks for t in (epoch(task.created_at), epoch(task.updated_at)) if t]
    created = epoch(config.created_at)
    t0 = min([*stamps, *([created] if created else [])], default=now or time.time())
    t1 = max(stamps, default=t0)
    active = [n for n in names if (s := states[n]) is not None and s.state in BUSY_STATES]
    if active:
        notes.append("still running when this report was made: " + ", ".join(active))

    def rel(value: float) -> float:
        return round(value - t0, 3)

    waits = request_waits(mailbox_items, tracks, t1)
    task_rows = [_task_row(task, tracks, rel) for task in tasks]
    sent: dict[str, int] = {}
    received: set[str] = set()
    for item in mailbox_items:
        sent[item.message.sender] = sent.get(item.message.sender, 0) + 1
        received.add(item.to)
    lanes: list[Lane] = []
    rows: list[MemberRow] = []
    for name in names:
        track, state, member = tracks[name], states[name], by_name.get(name)
        spans = [*track.spans, *idle_gaps(track, t1), *dead_spans(track, t1),
                 *(s for who, s in waits if who == name)]
        lane = Lane(name, member.color if member else None,
                    [Span(s.kind, rel(s.start), rel(s.end), s.label, s.outcome) for s in spans],
                    [Mark(m.kind, rel(m.at), m.label) for m in track.marks])
        lane.spans += [Span("task", r.claimed, r.done if r.done is not None else rel(t1),
                            f"#{r.id} {r.subject}", r.status)
                       for r in task_rows if r.owner == name and r.claimed is not None]
        lane.spans.sort(key=lambda s: s.start)
        row = _member_row(name, member, state, track, sent.get(name, 0), lane, t1)
        row.permissions = decisions.summary(team.name, name)
        # A lead led from the shell has no process, and a removed member may have left an empty
        # directory: show those only when they took part.
        quiet = not (lane.spans or lane.marks or row.messages_sent or row.turns or name in received)
        if quiet and (name == LEAD_NAME or member is None):
            continue
        lanes.append(lane)
        rows.append(row)
    totals = MemberRow("team", state=f"{len(rows)} member(s)")
    for row in rows:
        for key in ("turns", "tool_calls", "messages_sent", "input_tokens", "output_tokens",
                    "thinking_tokens", "cache_tokens", "tokens", "cost_usd", "busy_s", "dead_s"):
            setattr(totals, key, getattr(totals, key) + getattr(row, key))
    totals.cost_usd = round(totals.cost_usd, 6)
    totals.busy_s = round(totals.busy_s, 3)
    totals.dead_s = round(totals.dead_s, 3)
    totals.wall_s = round(t1 - t0, 3)
    messages = [_message_row(item, t0) for item in mailbox_items]
    return RunReport(team.name, config.description, iso(t0), iso(t1), round(t1 - t0, 3),
                     iso(now or time.time()), rows, totals, lanes, task_rows, messages, notes,
                     bool(active), events)


def _task_row(task: Task, tracks: dict[str, Track], rel: Any) -> TaskRow:
    claimed = tracks[task.owner].claims.get(task.id) if task.owner in tracks else None
    if claimed is None and task.owner and task.status != "pending":
        claimed = epoch(task.created_at)  # claimed outside a transcript: from its creation
    # Completed when its owner's TaskUpdate said so (the file's updated_at moves again when a
    # task it blocks changes); else when the file last changed (the CLI, another member).
    done = None
    if task.status == "completed":
        done = next((t.completions[task.id] for t in tracks.values()
                     if task.id in t.completions), None) or epoch(task.updated_at)
    took = None if claimed is None or done is None else round(max(done - claimed, 0.0), 3)
    return TaskRow(task.id, task.subject, task.owner, task.status,
                   None if claimed is None else rel(claimed),
                   None if done is None else rel(max(done, claimed or done)), took)


def _member_row(name: str, member: Member | None, state: AgentState | None, track: Track,
                sent: int, lane: Lane, end: float) -> MemberRow:
    row = MemberRow(name, member.color if member else None, member.model if member else None)
    row.state = state.state if state else ("-" if member else "removed")
    row.turns = state.turns if state else track.model_calls
    row.tool_calls = track.tool_calls
    row.messages_sent = sent
    if state is not None:
        usage = state.usage
        row.input_tokens, row.output_tokens = usage.input_tokens, usage.output_tokens
        row.thinking_tokens = usage.thinking_tokens
        row.cache_tokens = usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        row.tokens = usage.total_tokens
        row.cost_usd = round(usage.cost_usd, 6)
    row.busy_s = round(sum(s.end - s.start for s in lane.spans if s.kind == "work"), 3)
    row.dead_s = round(sum(s.end - s.start for s in lane.spans if s.kind == "dead"), 3)
    row.wall_s = round(sum((stop if stop is not None else end) - start
                           for start, stop in track.lifetimes), 3)
    return row


def _message_row(item: Addressed, t0: float) -> MessageRow:
    message = item.message
    kind = message.structured()
    at = epoch(message.timestamp)
    text = message.text if len(message.text) <= TEXT_CAP else (
        message.text[:TEXT_CAP] + f"\n... [{len(message.text) - TEXT_CAP} more characters: "
        f"`swarm inbox show {message.id[:8]}`]")
    line = structured_line(kind) if kind is not None else flat(message.summary or message.text)
    return MessageRow(message.id, round((at if at is not None else t0) - t0, 3), message.timestamp,
                      message.sender, item.to, kind.type if kind is not None else "text", line,
                      text)
