"""The run report as one self-contained HTML page: inline CSS and SVG, no script, no fetches.

The page stays light however long the run was: spans closer than a pixel on a lane are drawn as
one bar (its tooltip says how many), and the message list shows the first and last rows only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from html import escape
from typing import Any

from swarm.core.records.names import is_color
from swarm.ops.report.build import Lane, MemberRow, MessageRow, RunReport
from swarm.ops.report.timeline import Span

LABEL_W = 130  # px left of the plot for lane names
PLOT_W = 1000
LANE_H = 48
AXIS_H = 26
MESSAGE_ROWS = 400  # drawn in the list: the first and last half of this
TASK_ROWS = 500
DRAWN_MESSAGES = 600  # message lines drawn between lanes
COLORS = {"blue": "#2563eb", "green": "#16a34a", "yellow": "#ca8a04", "magenta": "#c026d3",
          "cyan": "#0891b2", "red": "#dc2626", "bright_blue": "#60a5fa",
          "bright_green": "#22c55e", "white": "#6b7280", "black": "#111827",
          "bright_black": "#4b5563", "bright_red": "#f87171", "bright_yellow": "#eab308",
          "bright_magenta": "#e879f9", "bright_cyan": "#22d3ee", "bright_white": "#9ca3af"}
DEFAULT_COLOR = "#6b7280"
# kind -> (y offset in the lane, height, fill, opacity); fill None = the member's colour
STYLE: dict[str, tuple[int, int, str | None, float]] = {
    "idle": (18, 2, "#9ca3af", 1.0),
    "dead": (18, 2, "#dc2626", 1.0),
    "work": (10, 18, None, 0.16),
    "model": (10, 7, None, 0.5),
    "tool": (17, 11, None, 0.95),
    "permission": (2, 7, "#f59e0b", 0.9),
    "plan": (2, 7, "#8b5cf6", 0.9),
    "task": (31, 12, None, 0.3),
}
LEGEND = [("work", "handling an input"), ("model", "model call"), ("tool", "tool calls"),
          ("permission", "waiting for permission"), ("plan", "waiting for plan approval"),
          ("idle", "idle"), ("dead", "dead (until respawned)"),
          ("task", "task, claim to completion")]
# Per column of the member table: (key, heading, format)
COLUMNS: list[tuple[str, str, str]] = [
    ("state", "State", "s"), ("turns", "Turns", "d"), ("tool_calls", "Tool calls", "d"),
    ("messages_sent", "Messages sent", "d"), ("input_tokens", "Input tokens", "d"),
    ("output_tokens", "Output tokens", "d"), ("thinking_tokens", "Thinking tokens", "d"),
    ("cache_tokens", "Cache tokens", "d"),
    ("tokens", "Tokens", "d"), ("cost_usd", "Cost", "$"), ("busy_s", "Busy", "t"),
    ("wall_s", "Wall time", "t"), ("dead_s", "Dead", "t")]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#111827;
background:#fff}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#4b5563}.notes{background:#fffbeb;border:1px solid #fcd34d;border-radius:6px;
padding:8px 12px;margin:12px 0}.empty{background:#f3f4f6;border-radius:6px;padding:16px;
font-size:16px}table{border-collapse:collapse;margin:4px 0}th,td{padding:3px 10px;
border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}th{background:#f9fafb;
font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}tr.total td{
font-weight:600;border-top:2px solid #9ca3af}.dot{display:inline-block;width:10px;height:10px;
border-radius:5px;margin-right:6px}.timeline{overflow-x:auto;border:1px solid #e5e7eb;
border-radius:6px;padding:6px}.legend span{margin-right:14px;white-space:nowrap}
.legend i{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle}
details pre{white-space:pre-wrap;background:#f9fafb;padding:6px;margin:4px 0;max-width:900px}
summary{cursor:pointer}.muted{color:#6b7280}.mono{font-family:ui-monospace,monospace;
font-size:12px}
"""


def color_of(name: str | None) -> str:
    """A member's colour as CSS: checked here too, since an old or hand-edited team file can hold
    anything, and the value goes into `style=` and `fill=` attributes."""
    if not isinstance(name, str) or not is_color(name):
        return DEFAULT_COLOR
    return name if name.startswith("#") else COLORS.get(name, DEFAULT_COLOR)


def seconds(value: float | None) -> str:
    """12.3s, 4m05s, 1h02m."""
    if value is None:
        return "-"
    if value == 0:
        return "0s"
    if value < 1:
        return f"{value * 1000:.0f}ms"
    if value < 60:
        return f"{value:.1f}s" if value < 10 else f"{value:.0f}s"
    if value < 3600:
        return f"{int(value // 60)}m{int(value % 60):02d}s"
    return f"{int(value // 3600)}h{int(value % 3600 // 60):02d}m"


def cell(row: MemberRow, key: str, fmt: str) -> str:
    value = getattr(row, key)
    shown = (f"{value:,}" if fmt == "d" else f"${value:.4f}" if fmt == "$"
             else seconds(value) if fmt == "t" else str(value))
    cls = "" if fmt == "s" else ' class="n"'
    return f'<td{cls} data-key="{key}" data-value="{escape(str(value))}">{escape(shown)}</td>'


def _merge(spans: Iterable[Span], scale: float) -> list[tuple[float, float, list[Span]]]:
    """Spans of one kind closer than a pixel become one bar: (x0, x1, spans) in pixels."""
    bars: list[tuple[float, float, list[Span]]] = []
    for span in sorted(spans, key=lambda s: s.start):
        x0, x1 = span.start * scale, max(span.end * scale, span.start * scale + 1)
        if bars and x0 <= bars[-1][1] + 1:
            start, end, group = bars[-1]
            group.append(span)
            if x1 > end:
                bars[-1] = (start, x1, group)
        else:
            bars.append((x0, x1, [span]))
    return bars


def _tip(spans: list[Span], kind: str) -> str:
    first, last = spans[0], max(spans, key=lambda s: s.end)
    when = f"{seconds(first.start)} to {seconds(last.end)}"
    if len(spans) == 1:
        outcome = f" ({first.outcome})" if first.outcome else ""
        return f"{first.label}{outcome}\n{when}, {first.end - first.start:.3f}s"
    labels = list(dict.fromkeys(s.label for s in spans))
    shown = "; ".join(labels[:4]) + (f"; and {len(labels) - 4} more" if len(labels) > 4 else "")
    return f"{len(spans)} x {kind}, {when}: {shown}"


def _lane_svg(lane: Lane, index: int, scale: float, out: list[str]) -> int:
    """Draw one lane; return how many bars it took."""
    y0 = AXIS_H + index * LANE_H
    color = color_of(lane.color)
    out.append(f'<rect x="0" y="{y0}" width="{LABEL_W + PLOT_W}" height="{LANE_H}" '
               f'fill="{"#fafafa" if index % 2 else "#fff"}"/>')
    out.append(f'<circle cx="10" cy="{y0 + 16}" r="5" fill="{color}"/>'
               f'<text x="20" y="{y0 + 20}" font-size="13" font-weight="600">'
               f'{escape(lane.name[:16])}</text>')
    drawn = 0
    by_kind: dict[str, list[Span]] = {}
    for span in lane.spans:
        by_kind.setdefault(span.kind, []).append(span)
    for kind, (dy, height, fill, opacity) in STYLE.items():
        for x0, x1, group in _merge(by_kind.get(kind, []), scale):
            bad = any(s.outcome in ("error", "denied", "no result") for s in group)
            paint = "#dc2626" if bad and kind == "tool" else (fill or color)
            out.append(f'<rect x="{LABEL_W + x0:.1f}" y="{y0 + dy}" width="{x1 - x0:.1f}" '
                       f'height="{height}" fill="{paint}" fill-opacity="{opacity}"'
                       + (f' stroke="{paint}"' if kind == "task" else "")
                       + f'><title>{escape(_tip(group, kind))}</title></rect>')
            if kind == "task" and len(group) == 1 and x1 - x0 > 40:
                chars = int((x1 - x0 - 6) / 6.5)
                out.append(f'<text x="{LABEL_W + x0 + 3:.1f}" y="{y0 + dy + 10}" font-size="10">'
                           f'{escape(group[0].label[:chars])}</text>')
            drawn += 1
    for x0, _, group in _merge((Span(m.kind, m.at, m.at, m.label) for m in lane.marks), scale):
        paint = {"started": "#16a34a", "exited": "#111827", "interrupted": "#dc2626"}.get(
            group[0].kind, "#6b7280")
        out.append(f'<rect x="{LABEL_W + x0 - 1:.1f}" y="{y0 + 6}" width="2" height="26" '
                   f'fill="{paint}"><title>{escape(_tip(group, "events"))}</title></rect>')
        drawn += 1
    return drawn


def _axis(duration: float, scale: float, height: int, out: list[str]) -> None:
    raw = max(duration / 10, 1e-3)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    tick = 0.0
    while tick <= duration + 1e-9:
        x = LABEL_W + tick * scale
        out.append(f'<line x1="{x:.1f}" y1="{AXIS_H - 6}" x2="{x:.1f}" y2="{height}" '
                   f'stroke="#e5e7eb"/><text x="{x + 2:.1f}" y="{AXIS_H - 10}" font-size="11" '
                   f'fill="#6b7280">{seconds(tick) if step >= 1 else f"{tick:.2f}s"}</text>')
        tick += step


def _messages_svg(report: RunReport, scale: float, out: list[str]) -> int:
    lane_of = {lane.name: i for i, lane in enumerate(report.lanes)}
    colors = {lane.name: color_of(lane.color) for lane in report.lanes}
    seen: set[tuple[int, str, str]] = set()
    drawn = 0
    for row in report.messages:
        if row.kind == "idle_notification" or row.sender not in lane_of or row.to not in lane_of:
            continue
        key = (int(row.at * scale), row.sender, row.to)
        if key in seen:
            continue  # same pixel, same pair: one line is enough
        seen.add(key)
        if drawn >= DRAWN_MESSAGES:
            break
        x = LABEL_W + row.at * scale
        y1 = AXIS_H + lane_of[row.sender] * LANE_H + 19
        y2 = AXIS_H + lane_of[row.to] * LANE_H + 19
        tip = escape(f"{row.sender} -> {row.to} at {seconds(row.at)}: {row.line[:200]}")
        out.append(f'<g><line x1="{x:.1f}" y1="{y1}" x2="{x:.1f}" y2="{y2}" '
                   f'stroke="{colors[row.sender]}" stroke-width="1.5" stroke-opacity="0.6"/>'
                   f'<circle cx="{x:.1f}" cy="{y2}" r="3" fill="{colors[row.sender]}"/>'
                   f"<title>{tip}</title></g>")
        drawn += 1
    return drawn


def timeline_svg(report: RunReport) -> tuple[str, int]:
    """The timeline and how many shapes it took."""
    duration = max(report.duration_s, 1e-3)
    scale = PLOT_W / duration
    height = AXIS_H + LANE_H * len(report.lanes) + 4
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_W + PLOT_W + 10}" '
           f'height="{height}" font-family="system-ui,sans-serif" role="img" '
           f'aria-label="timeline of team {escape(report.team)}">']
    shapes = 0
    for index, lane in enumerate(report.lanes):
        shapes += _lane_svg(lane, index, scale, out)
    _axis(duration, scale, height, out)
    shapes += _messages_svg(report, scale, out)
    out.append("</svg>")
    return "".join(out), shapes


def _member_table(report: RunReport) -> str:
    head = "".join(f"<th>{escape(title)}</th>" for _, title, _ in COLUMNS)
    rows = [f'<table id="members"><tr><th>Member</th><th>Model</th>{head}</tr>']
    for row in report.members:
        dot = f'<span class="dot" style="background:{color_of(row.color)}"></span>'
        rows.append(f'<tr data-member="{escape(row.name)}"><td>{dot}{escape(row.name)}</td>'
                    f'<td>{escape(row.model or "-")}</td>'
                    + "".join(cell(row, key, fmt) for key, _, fmt in COLUMNS) + "</tr>")
    total = report.totals
    rows.append('<tr class="total" data-member="team"><td>Team</td><td></td>'
                + "".join(cell(total, key, fmt) for key, _, fmt in COLUMNS) + "</tr></table>")
    return "".join(rows)


def _task_table(report: RunReport) -> str:
    if not report.tasks:
        return '<p class="muted">No tasks.</p>'
    rows = ['<table id="tasks"><tr><th>#</th><th>Subject</th><th>Owner</th><th>Status</th>'
            "<th>Claimed</th><th>Done</th><th>Took</th></tr>"]
    for task in report.tasks[:TASK_ROWS]:
        rows.append(f"<tr><td>{escape(task.id)}</td><td>{escape(task.subject)}</td>"
                    f"<td>{escape(task.owner or '-')}</td><td>{escape(task.status)}</td>"
                    f'<td class="n">{seconds(task.claimed)}</td><td class="n">'
                    f'{seconds(task.done)}</td><td class="n">{seconds(task.took_s)}</td></tr>')
    if len(report.tasks) > TASK_ROWS:
        rows.append(f'<tr><td colspan="7" class="muted">... {len(report.tasks) - TASK_ROWS} '
                    "more tasks (`swarm report --json` has them all)</td></tr>")
    return "".join(rows) + "</table>"


def _message_row(row: MessageRow) -> str:
    body = ""
    if row.kind == "text" and row.text.strip() and row.text.strip() != row.line:
        body = f"<details><summary>text</summary><pre>{escape(row.text)}</pre></details>"
    return (f'<tr><td class="n">{seconds(row.at)}</td><td>{escape(row.sender)} &rarr; '
            f"{escape(row.to)}</td><td>{escape(row.line[:300])}{body}</td>"
            f'<td class="mono muted">{escape(row.id[:8])}</td></tr>')


def _message_table(report: RunReport) -> str:
    if not report.messages:
        return '<p class="muted">No messages.</p>'
    rows = ['<table id="messages"><tr><th>At</th><th>From &rarr; to</th><th>Message</th>'
            "<th>Id</th></tr>"]
    messages = report.messages
    if len(messages) <= MESSAGE_ROWS:
        rows += [_message_row(m) for m in messages]
    else:
        half = MESSAGE_ROWS // 2
        rows += [_message_row(m) for m in messages[:half]]
        rows.append(f'<tr><td colspan="4" class="muted">... {len(messages) - MESSAGE_ROWS} '
                    "messages not shown here (`swarm report --json` has them all; "
                    "`swarm inbox show ID` prints one)</td></tr>")
        rows += [_message_row(m) for m in messages[-half:]]
    return "".join(rows) + "</table>"


def _when(stamp: str) -> str:
    return escape(stamp.replace("T", " ")[:19] + " UTC")


def render_html(report: RunReport) -> str:
    svg, shapes = timeline_svg(report)
    notes = list(report.notes)
    spans = sum(len(lane.spans) for lane in report.lanes)
    if spans > shapes:
        notes.append(f"{spans:,} spans drawn as {shapes:,} shapes: what lies within a pixel "
                     "is one bar (hover it for the count)")
    title = f"swarm report: {report.team}"
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{escape(title)}</h1>"]
    if report.description:
        parts.append(f'<div class="sub">{escape(report.description)}</div>')
    done = sum(1 for t in report.tasks if t.status == "completed")
    parts.append(f'<div class="sub">{_when(report.start)} to {_when(report.end)} '
                 f"({seconds(report.duration_s)}) &middot; {len(report.members)} member(s) "
                 f"&middot; {done}/{len(report.tasks)} task(s) done &middot; "
                 f"{len(report.messages)} message(s) &middot; ${report.totals.cost_usd:.4f}"
                 f" &middot; made {_when(report.generated_at)}"
                 f"{' while the team was running' if report.active else ''}</div>")
    if notes:
        parts.append('<div class="notes" id="notes"><b>Notes</b><ul>'
                     + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul></div>")
    if report.empty:
        parts.append(f'<p class="empty" id="no-activity">No activity recorded for team '
                     f"{escape(report.team)} yet: no member has run, no message was sent and "
                     "there are no tasks.</p>")
    parts += ["<h2>Members</h2>", _member_table(report)]
    if report.lanes:
        legend = "".join(
            f'<span><i style="background:{STYLE[k][2] or "#2563eb"};opacity:'
            f'{max(STYLE[k][3], 0.4)}"></i>{escape(text)}</span>' for k, text in LEGEND)
        parts += ["<h2>Timeline</h2>", f'<div class="legend sub">{legend}<span>| lines: '
                  "messages (sender's colour); ticks: started, exited, interrupted</span></div>",
                  f'<div class="timeline">{svg}</div>']
    parts += ["<h2>Tasks</h2>", _task_table(report), "<h2>Messages</h2>", _message_table(report),
              "</body></html>"]
    return "\n".join(parts)


TEXT_COLUMNS = ("state", "turns", "tool_calls", "messages_sent", "tokens", "cost_usd", "busy_s",
                "wall_s")


def report_rows(report: RunReport) -> tuple[list[str], list[list[str]]]:
    """The member table for the terminal: its headers and rows (the totals last)."""
    columns = [c for c in COLUMNS if c[0] in TEXT_COLUMNS]
    headers = ["MEMBER", *(key.removesuffix("_usd").removesuffix("_s").replace("_", " ").upper()
                           for key, _, _ in columns)]
    lines: list[list[str]] = []
    for row in [*report.members, report.totals]:
        values: list[Any] = [getattr(row, key) for key, _, _ in columns]
        lines.append([row.name, *(f"{v:,}" if f == "d" else f"${v:.4f}" if f == "$"
                                  else seconds(v) if f == "t" else str(v)
                                  for v, (_, _, f) in zip(values, columns, strict=True))])
    return headers, lines
