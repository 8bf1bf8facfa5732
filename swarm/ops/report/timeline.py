"""A member's time, read from its transcript: what `swarm report` lays out on its lane.

A model call runs from the previous entry to the assistant message; tool calls from the
assistant message to their results (calls answered together share one span); work from an
input to the assistant message without tool calls; idle is the rest of the process's life
(between `started` and `exited` events). A process that died without an `exited` (SIGKILL, a
lost host) ends at the `died` event the observer who recorded the death wrote: at its last
sign of life (its last heartbeat or entry); it is dead from there to its next `started`. Permission and plan waits run from the request to its
answer in the member's mailbox (or to the tool's result: a timeout). Times are epoch seconds;
`report.py` makes them relative to the start of the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from swarm.core.records.protocol import (
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
)
from swarm.core.text.readable import flat, tool_call
from swarm.ops.mail.messages import Addressed

TASK_INPUT_RE = re.compile(r'<task-assignment id="(\d+)"')


@dataclass
class Span:
    """A stretch of time on a member's lane. kind: work (handling one input), model (a model
    call), tool (tool calls, to their result), permission / plan (waiting for the lead), idle
    (between inputs, process running), task (from claim to completion)."""

    kind: str
    start: float
    end: float
    label: str
    outcome: str = ""


@dataclass
class Mark:
    """A moment on a lane: started, exited, interrupted, compaction, or another recorded event."""

    kind: str
    at: float
    label: str


def epoch(stamp: Any) -> float | None:
    """An ISO 8601 timestamp as epoch seconds; None when it is not one."""
    if not isinstance(stamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


@dataclass
class Track:
    """What one member's transcript says, in epoch seconds (made relative at the end)."""

    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    model_calls: int = 0
    tool_calls: int = 0
    claims: dict[str, float] = field(default_factory=dict)
    completions: dict[str, float] = field(default_factory=dict)  # task id -> TaskUpdate done
    tool_ends: dict[str, float] = field(default_factory=dict)  # tool_use_id -> result time
    first: float | None = None
    last: float | None = None
    lifetimes: list[tuple[float, float | None]] = field(default_factory=list)
    deaths: list[tuple[float, float | None, str]] = field(default_factory=list)  # until respawn


def read_track(entries: list[dict[str, Any]]) -> tuple[Track, int]:
    """Spans and marks out of transcript entries; also the number of entries without a time."""
    track = Track()
    undated = 0
    work: float | None = None
    tools: dict[str, tuple[float, str]] = {}
    completing: dict[str, str] = {}  # tool_use id of a TaskUpdate to completed -> task id
    prev: float | None = None

    def close_work(at: float, outcome: str = "") -> None:
        nonlocal work
        if work is not None:
            track.spans.append(Span("work", work, max(at, work), "handling input", outcome))
            work = None

    for entry in entries:
        ts = epoch(entry.get("ts"))
        if ts is None:
            undated += 1
            continue
        track.first = ts if track.first is None else track.first
        track.last = ts
        kind = entry.get("kind")
        if kind == "event":
            name = str(entry.get("event", "event"))
            if name == "started":
                close_work(prev if prev is not None else ts, "process ended")
                if track.lifetimes and track.lifetimes[-1][1] is None:  # ended unrecorded
                    track.lifetimes[-1] = (track.lifetimes[-1][0], prev or ts)
                if track.deaths and track.deaths[-1][1] is None:
                    track.deaths[-1] = (track.deaths[-1][0], ts, track.deaths[-1][2])
                track.lifetimes.append((ts, None))
                label = f"started (model {entry.get('model', '?')}, pid {entry.get('pid', '?')})"
            elif name == "exited":
                close_work(ts, "exited")
                if track.lifetimes and track.lifetimes[-1][1] is None:
                    track.lifetimes[-1] = (track.lifetimes[-1][0], ts)
                label = f"exited: {entry.get('detail', '')}"
            elif name == "interrupted":
                close_work(ts, "interrupted")
                label = "interrupted"
            elif name == "died":
                ts = _died(track, entry, ts, prev, tools, close_work)
                label = f"died: {entry.get('detail', '')}"
            else:
                label = name
            track.marks.append(Mark(name, ts, label))
        elif kind == "compaction":
            track.marks.append(Mark("compaction", ts, "conversation compacted"))
        elif kind == "message":
            message = entry.get("message") or {}
            content = message.get("content")
            blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
            if message.get("role") == "assistant":
                track.model_calls += 1
                track.spans.append(Span("model", prev if prev is not None else ts, ts, "model call"))
                uses = [b for b in blocks if b.get("type") == "tool_use"]
                for use in uses:
                    args = use.get("input")
                    tools[str(use.get("id"))] = (ts, tool_call(str(use.get("name")), args))
                    if (use.get("name") == "TaskUpdate" and isinstance(args, dict)
                            and args.get("status") == "completed"):
                        completing[str(use.get("id"))] = str(args.get("task_id"))
                track.tool_calls += len(uses)
                if work is None:
                    work = prev if prev is not None else ts
                if not uses:
                    close_work(ts)
            else:
                results = [b for b in blocks if b.get("type") == "tool_result"]
                for result in results:
                    use_id = str(result.get("tool_use_id"))
                    track.tool_ends[use_id] = ts
                    started = tools.pop(use_id, None)
                    done = completing.pop(use_id, None)
                    if done is not None and not result.get("is_error"):
                        track.completions.setdefault(done, ts)
                    if started is not None:
                        outcome = "error" if result.get("is_error") else "ok"
                        track.spans.append(Span("tool", started[0], ts, started[1], outcome))
                texts = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
                if texts and not results and work is None:
                    work = ts
                for task_id in TASK_INPUT_RE.findall(texts):
                    track.claims.setdefault(task_id, ts)
        prev = ts
    end = track.last if track.last is not None else 0.0
    for start, label in tools.values():
        track.spans.append(Span("tool", start, end, label, "no result"))
    if work is not None:
        track.spans.append(Span("work", work, end, "handling input", "open"))
    return track, undated


def _died(track: Track, entry: dict[str, Any], noticed: float, prev: float | None,
          tools: dict[str, tuple[float, str]], close_work: Any) -> float:
    """A death an observer recorded: the process ended at its last sign of life (never later
    than noticed); what it was doing ends there, and it is dead until it starts again."""
    signs = [t for t in (epoch(entry.get("last_alive")), prev) if t is not None]
    at = min(max(signs), noticed) if signs else noticed
    close_work(at, "died")
    for start, label in tools.values():
        track.spans.append(Span("tool", start, max(at, start), label, "died"))
    tools.clear()
    if track.lifetimes and track.lifetimes[-1][1] is None:
        track.lifetimes[-1] = (track.lifetimes[-1][0], max(at, track.lifetimes[-1][0]))
    track.deaths.append((at, None, f"dead: {entry.get('detail', '')}"))
    return at


def dead_spans(track: Track, end: float) -> list[Span]:
    """Time a member was dead: from its recorded death to its next start (or the end)."""
    return [Span("dead", start, max(start, stop if stop is not None else end), label)
            for start, stop, label in track.deaths]


def idle_gaps(track: Track, end: float) -> list[Span]:
    """Time a process was alive and not handling input."""
    gaps: list[Span] = []
    works = sorted((s.start, s.end) for s in track.spans if s.kind == "work")
    for alive_from, alive_to in track.lifetimes:
        until = alive_to if alive_to is not None else end
        cursor = alive_from
        for start, stop in works:
            if stop <= cursor or start >= until:
                continue
            if start > cursor:
                gaps.append(Span("idle", cursor, start, "idle"))
            cursor = max(cursor, stop)
        if until > cursor:
            gaps.append(Span("idle", cursor, until, "idle"))
    return gaps


def request_waits(messages: list[Addressed], tracks: dict[str, Track], end: float) -> list[tuple[str, Span]]:
    """Permission and plan waits: from the request to its answer (or to the tool's result when
    none came: a timeout, an interrupt, a shutdown)."""
    answers: dict[str, tuple[float, Any]] = {}
    for item in messages:
        kind = item.message.structured() if '"request_id"' in item.message.text else None
        if isinstance(kind, PermissionResponse | PlanApprovalResponse):
            at = epoch(item.message.timestamp)
            if at is not None:
                answers.setdefault(kind.request_id, (at, kind))
    out: list[tuple[str, Span]] = []
    for item in messages:
        text = item.message.text
        if '"permission_request"' not in text and '"plan_approval_request"' not in text:
            continue
        kind = item.message.structured()
        at = epoch(item.message.timestamp)
        if at is None or not isinstance(kind, PermissionRequest | PlanApprovalRequest):
            continue
        who = item.message.sender
        answer = answers.get(kind.request_id)
        if isinstance(kind, PermissionRequest):
            label = f"asks: {tool_call(kind.tool_name, kind.input)}"
            fallback = tracks[who].tool_ends.get(str(kind.tool_use_id)) if who in tracks else None
            span_kind = "permission"
        else:
            label, fallback, span_kind = f"plan: {flat(kind.plan)[:120]}", None, "plan"
        if answer is not None:
            done, response = answer
            outcome = "approved" if response.approve else "denied"
            if getattr(response, "always", False):
                outcome += " (always)"
        else:
            done, outcome = (fallback, "no answer") if fallback is not None else (end, "waiting")
        out.append((who, Span(span_kind, at, max(done, at), label, outcome)))
    return out
