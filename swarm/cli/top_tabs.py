"""What the tabs of `swarm top` show for the selected member, as text (cli.top_app makes it
visible and draws it): read when the team or the selection changes, never on a timer."""

from __future__ import annotations

import os
from typing import NamedTuple

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.errors import SwarmError
from swarm.ops.diff import member_diff
from swarm.ops.mail.messages import mailbox_messages
from swarm.ops.top import MemberRow

LOG_TAIL = 64 * 1024  # bytes of a member's agent.log read for the Output tab
LOG_LINES = 500  # lines the Output tab keeps
MAIL_SHOWN = 20  # the newest messages in the Mail tab


class LogPart(NamedTuple):
    lines: list[str]
    end: int  # where the next read starts (a whole line's end)
    restarted: bool  # the file is shorter than the last read: a new log, read from its end


def log_lines(team: Team, name: str, offset: int | None = None) -> LogPart | None:
    """The member's agent.log from `offset` (None: its last LOG_TAIL bytes), whole lines only
    (raw: the caller makes them visible); None when it has none yet."""
    path = paths.agent_log(team.name, name)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            restarted = offset is not None and offset > size
            start = max(size - LOG_TAIL, 0) if offset is None or restarted else offset
            handle.seek(start)
            data = handle.read()
    except OSError:
        return None
    whole = data[:data.rfind(b"\n") + 1]
    lines = whole.decode("utf-8", "replace").splitlines()[-LOG_LINES:]
    return LogPart(lines, start + len(whole), restarted)


def tasks_text(team: Team, name: str) -> str:
    tasks = [t for t in team.tasks.list() if t.owner == name]
    if not tasks:
        return f"{name} owns no task"
    return "\n".join(f"#{t.id} [{t.status}] {t.subject}" + (
        f" (blocked by {', '.join('#' + b for b in t.blocked_by)})" if t.blocked_by else "")
        for t in tasks)


def mail_text(team: Team, name: str) -> str:
    """Its mailbox, newest last; `*` marks what it has not read."""
    got = mailbox_messages(team, name)[-MAIL_SHOWN:]
    lines = [f"{'  ' if m.read else '* '}{m.timestamp[11:19]} from {m.sender}: "
             f"{m.summary or ' '.join(m.text.split())[:120]}" for m in got]
    return "\n".join(lines) or f"no mail to {name}"


def info_text(team: Team, row: MemberRow | None, name: str) -> str:
    config = team.config()
    member = config.member(name)
    if row is None or member is None:
        return name
    return "\n".join([
        f"name     {row.name} ({row.kind})", f"model    {row.model or '-'}",
        f"state    {row.state}" + (f": {row.detail}" if row.detail else ""),
        f"mode     {row.mode or '-'}", f"allow    {', '.join(member.allow_rules) or '-'}",
        f"team     {', '.join(config.allowed_rules) or '-'}",
        f"pid      {row.pid or '-'}   host {row.host or 'here'}   backend {row.backend}"])


def diff_text(team: Team, name: str) -> str:
    """`swarm diff NAME`'s patch (git runs here: called in a worker, when the tab opens)."""
    try:
        found = member_diff(team, name)
    except SwarmError as exc:
        return str(exc)
    return found.diff or found.note or f"{name} changed nothing"
