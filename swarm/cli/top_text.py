"""The text of `swarm top`'s view, made once for the screen (cli.top_app) and for `--once`
(cli.top): the header line, the member table, a request's line. Every piece of team data in it
passes `visible_line`."""

from __future__ import annotations

from swarm.core.records.state import activity_text, cost_text
from swarm.core.text.tables import cut
from swarm.core.text.tables import render as render_table
from swarm.core.text.terminal import visible_line
from swarm.ops.top import GROUPS, MemberRow, RequestRow, TeamView

HEADERS = ["NAME", "KIND", "HOST", "ACTIVITY", "FOR", "TASK", "UNREAD", "TURNS", "TOKENS",
           "COST"]
OPTIONAL = ("HOST", "TURNS", "UNREAD", "TOKENS", "COST")  # left out first when narrow


def header_line(view: TeamView) -> str:
    lead = view.lead_state or "a person"
    budget = f" of ${view.budget_usd:.2f}" if view.budget_usd is not None else ""
    waiting = len(view.requests)
    return visible_line(
        f"team {view.team} · lead {lead} · tasks {view.tasks_done}/{view.tasks_total} done · "
        f"cost {cost_text(view.cost_usd, view.cost_known)}{budget} · "
        f"{waiting} waiting for you")


def _cells(row: MemberRow, now: float) -> list[str]:
    doing, since = activity_text(row.state, row.activity, row.activity_since,
                                 row.last_activity, now)
    if row.state in ("exited", "dead"):
        doing, since = row.state + (f": {row.detail}" if row.detail else ""), ""
    elif row.group == "needs" and row.state not in ("waiting_permission", "awaiting_plan"):
        doing = doing if doing != "-" else "asks"
    task = f"#{row.task}" + (f" {row.task_subject}" if row.task_subject else "") \
        if row.task else "-"
    return [visible_line(c) for c in (
        row.name, row.kind, row.host or "-", doing, since, task, str(row.unread),
        str(row.turns), str(row.tokens), cost_text(row.cost_usd, row.cost_known))]


def member_table(members: list[MemberRow], now: float, width: int | None) -> list[str]:
    """The header line, then one line per member, in `members`' order, fitted to `width`."""
    if not members:
        return []
    drawn = render_table([_cells(m, now) for m in members], HEADERS, width, OPTIONAL,
                         ("ACTIVITY", "TASK"))
    lines = drawn.text.split("\n")
    return lines + [""] * (len(members) + 1 - len(lines))


def request_line(request: RequestRow) -> str:
    """Who asks for what, with the real input, on one line."""
    mode = f" ({request.mode} mode)" if request.mode else ""
    if request.kind == "plan":
        return visible_line(f"{request.sender}{mode} has a plan waiting for approval")
    words = f" - it says: {' '.join(request.description.split())}" \
        if request.description and request.description not in request.what else ""
    return visible_line(f"{request.sender}{mode} asks: {request.what}{words}")


def once_text(view: TeamView, now: float, width: int | None) -> str:
    """The grouped view as text (`swarm top --once`)."""
    out = [header_line(view)]
    lines = member_table(view.members, now, width)
    if lines:
        out.append(lines[0])
    for key, title in GROUPS.items():
        rows = [i for i, m in enumerate(view.members) if m.group == key]
        if rows:
            out.append(f"{title} ({len(rows)})")
            out += [f"{lines[i + 1]}" for i in rows]
    if not view.members:
        out.append("(no members)")
    if view.requests:
        out.append("Waiting for you:")
        out += [f"  {r.request_id[:8]}  {request_line(r)}" for r in view.requests]
    return "\n".join(cut(line, width) if width else line for line in out)
