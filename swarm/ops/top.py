"""What `swarm top` shows, as plain records, and the feed that keeps it current.

`snapshot` reads a team once (members, their exact state, the requests waiting for the person)
into a `TeamView`; the dashboard, `top --once` and `top --json` all render it, so they never
disagree. `follow` calls `snapshot` again only when the store says something changed: it
watches every mailbox and the task list, and the state of the members that are not quiet (an
idle teammate rewrites its state at each heartbeat, which says nothing new). Every way out of
quiet touches a watched mailbox or task first (a message lands, a request is sent, a task is
claimed), so a team that is idle is not read at all. The one thing no write announces is a
local process dying while idle: the feed checks its pids in /proc (not the store) each
`LIVENESS` seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct
from msgspec.structs import asdict

from swarm.core import kinds
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import PermissionRequest
from swarm.core.store import select as stores
from swarm.core.store.liveness import is_alive
from swarm.core.store.waker import Waker
from swarm.core.team.team import Team
from swarm.core.text.real_input import shown_input
from swarm.ops.approvals import Pending, pending_permissions, pending_plans
from swarm.ops.member.health import MemberStatus, observe, observe_lead

# The groups, in the order shown; their headings.
GROUPS: dict[str, str] = {"needs": "Needs you", "working": "Working", "idle": "Idle",
                          "gone": "Exited / Dead"}
ASKING = ("waiting_permission", "awaiting_plan")  # states of a member waiting for a person
QUIET = ("idle", "exited", "dead")  # states that write nothing new but heartbeats
LIVENESS = 2.0  # seconds between /proc checks of the members' pids (no store read)
SETTLE = 0.03  # seconds to let a burst of writes land before reading once for all of them


class RequestRow(Struct, dict=True):
    request_id: str
    sender: str
    kind: str  # "permission" or "plan"
    asked_at: str  # the request message's timestamp (ISO, UTC)
    tool: str | None = None
    input: dict[str, Any] | None = None  # the real input (never only the asker's words)
    command: str | None = None  # Bash: the command
    what: str = ""  # one line of what the call would really do
    description: str = ""  # the asker's own words about it
    plan: str | None = None
    mode: str | None = None  # the asker's permission mode now


class MemberRow(Struct, dict=True):
    name: str
    group: str  # a key of GROUPS
    state: str
    kind: str  # swarm's own loop: its model (`shell`, `sonnet`); an agent CLI: its kind
    model: str | None
    host: str | None
    color: str | None
    mode: str | None
    pid: int | None
    task: str | None
    task_subject: str | None
    unread: int
    turns: int
    tokens: int
    cost_usd: float
    cost_known: bool
    activity: str | None
    activity_since: float | None
    last_activity: str | None
    detail: str | None
    backend: str | None
    pane_id: str | None


class TeamView(Struct, dict=True):
    team: str
    lead_state: str | None  # None: led from a person's shell
    tasks_done: int
    tasks_total: int
    cost_usd: float
    cost_known: bool
    budget_usd: float | None
    members: list[MemberRow]
    requests: list[RequestRow]  # permissions first, then plans, each oldest first
    busy: list[str]  # members whose state writes are worth watching

    def as_dict(self) -> dict[str, Any]:
        return asdict_deep(self)

    def member(self, name: str) -> MemberRow | None:
        return next((m for m in self.members if m.name == name), None)

    def pids(self) -> dict[str, int]:
        """Local live members' pids (a member on another host has only its heartbeat)."""
        return {m.name: m.pid for m in self.members
                if m.pid and not m.host and m.group != "gone"}


def asdict_deep(value: Any) -> Any:
    if isinstance(value, Struct):
        return {k: asdict_deep(v) for k, v in asdict(value).items()}
    if isinstance(value, list):
        return [asdict_deep(v) for v in value]
    return value


def kind_label(model: str | None, agent: str | None) -> str:
    """`shell`, `sonnet`, `scripted:x.yaml` for swarm's own loop; the agent CLI's kind else."""
    kind = kinds.of_member(agent)
    if kind is kinds.of_member(None):
        return model or "-"
    return kind.name


def _request(pending: Pending, modes: dict[str, str | None]) -> RequestRow:
    sender = pending.message.sender
    row = RequestRow(request_id=pending.request.request_id, sender=sender,
                     kind="permission", asked_at=pending.message.timestamp, mode=modes.get(sender))
    if isinstance(pending.request, PermissionRequest):
        row.tool = pending.request.tool_name
        row.input = dict(pending.request.input)
        command = row.input.get("command") if row.tool == "Bash" else None
        row.command = command if isinstance(command, str) else None
        row.what = shown_input(row.tool, row.input)
        row.description = pending.request.description
    else:
        row.kind = "plan"
        row.plan = pending.request.plan
        row.what = "approve its plan"
    return row


def _group(status: MemberStatus, asking: set[str]) -> str:
    if status.state in ("exited", "dead"):
        return "gone"
    if status.name in asking or status.state in ASKING:
        return "needs"
    return "idle" if status.state == "idle" else "working"


def snapshot(team: Team) -> TeamView:
    """The team as `swarm top` shows it, read once."""
    config = team.config()
    members = {m.name: m for m in config.members}
    statuses = observe(team)
    lead = observe_lead(team)
    if lead is not None:
        statuses.insert(0, lead)
    modes = {s.name: s.mode for s in statuses}
    requests = [_request(p, modes) for p in [*pending_permissions(team), *pending_plans(team)]]
    asking = {r.sender for r in requests}
    tasks = team.tasks.list()
    subjects = {t.id: t.subject for t in tasks}
    rows = []
    for status in statuses:
        member = members.get(status.name)
        rows.append(MemberRow(
            name=status.name, group=_group(status, asking), state=status.state,
            kind=kind_label(status.model, member.agent if member else None),
            model=status.model, host=member.host if member else None, color=status.color,
            mode=status.mode, pid=status.pid, task=status.current_task,
            task_subject=subjects.get(status.current_task or ""), unread=status.unread,
            turns=status.turns, tokens=status.tokens, cost_usd=status.cost_usd,
            cost_known=status.cost_known, activity=status.activity,
            activity_since=status.activity_since, last_activity=status.last_activity,
            detail=status.detail, backend=status.backend, pane_id=status.pane_id))
    order = list(GROUPS)
    rows.sort(key=lambda r: order.index(r.group))  # stable: the team's order within a group
    lead_member = members.get(LEAD_NAME)
    return TeamView(
        team=team.name, lead_state=lead.state if lead else None,
        tasks_done=sum(1 for t in tasks if t.status == "completed"), tasks_total=len(tasks),
        cost_usd=round(sum(s.cost_usd for s in statuses), 6),
        cost_known=all(s.cost_known for s in statuses),
        budget_usd=lead_member.max_budget_usd if lead_member else None,
        members=rows, requests=requests,
        busy=sorted(s.name for s in statuses if s.state not in QUIET or s.unread))


class Feed:
    """Follows a team: `run` posts a new `TeamView` to `on_view` after each change, until
    `on_view` returns False or `stop` is called (from any thread). `reads` counts snapshots."""

    def __init__(self, team: Team, on_view: Callable[[TeamView], bool]) -> None:
        self.team = team
        self.on_view = on_view
        self.waker = Waker()
        self.reads = 0
        self._stopped = False

    def stop(self) -> None:
        self._stopped = True
        self.waker.set()

    def refresh(self) -> None:
        """Read again now (after an action of the dashboard's own)."""
        self.waker.set()

    def run(self) -> None:
        busy: list[str] = []
        try:
            while not self._stopped:
                # The watcher exists before the read: a write between them wakes it at once.
                with stores.team_watcher(self.team.name, None, True, busy,
                                         self.waker) as watcher:
                    self.waker.clear()
                    view = snapshot(self.team)
                    self.reads += 1
                    if self._stopped or not self.on_view(view):
                        return
                    if view.busy != busy:
                        busy = view.busy
                        continue
                    self._sleep(watcher, view.pids())
        finally:
            self.waker.close()

    def _sleep(self, watcher: Any, pids: dict[str, int]) -> None:
        """Until the watcher wakes, or one of `pids` is gone (checked in /proc)."""
        while not self._stopped:
            if watcher.wait(LIVENESS if pids else None):
                watcher.wait(SETTLE)  # a burst (a request and a state) read once
                return
            if any(not is_alive(pid) for pid in pids.values()):
                return
