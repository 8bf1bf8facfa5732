"""Receipts: whether a sent message has been read, waiting until it is (`swarm send
--wait-read`), and what became of each message a member sent (`swarm inbox --sent`).

A message is read once its recipient has put it into its conversation (messages.md): then it is no
longer among the mailbox's unread messages, on either store (the file store's reader marks it
and compacts it to the archive; Redis moves the acknowledged position or adds it to the read
set). So a receipt is the recipient's own `unread()`: no second record to drift. Waiting
blocks on the store's watcher (inotify on the mailbox file and state.json; on Redis the
change feed's `read` and `state` entries), and looks for a death the process could not
record itself (SIGKILL) every CHECK_EVERY seconds: never a hot loop.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from msgspec import Struct

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message
from swarm.core.store import select as stores
from swarm.core.team.state import looks_stopped, read_state
from swarm.core.team.team import Team
from swarm.core.text.readable import will_not_read
from swarm.errors import RecipientStoppedError, WaitTimeoutError
from swarm.ops.mail.messages import team_messages
from swarm.ops.member.health import death_reason, observe_lead
from swarm.ops.member.restart import WakeResult, stopped

CHECK_EVERY = 2.0  # seconds between looks for a death nobody recorded (a SIGKILL)


def read_by(team: str, sent: dict[str, list[str]]) -> dict[str, bool]:
    """Per recipient: True when every message of `sent[name]` has been read."""
    out, handle = {}, Team(team)
    for name, ids in sent.items():
        waiting = {m.id for m in handle.inbox(name, checked=False).unread()}
        out[name] = not waiting.intersection(ids)
    return out


def _not_reading(team: Team, name: str) -> WakeResult | None:
    """`name` when it has exited or died (a death not recorded yet is recorded now)."""
    if name == LEAD_NAME:  # a `swarm lead` process, if one leads: its row says
        row = observe_lead(team, record=False)
        if row is not None and row.state in ("exited", "dead"):
            return WakeResult(LEAD_NAME, row.state, row.detail)
        return None
    member = team.config().member(name)
    if member is None:
        return None
    if not looks_stopped(team.name, name) and death_reason(
            member, read_state(team.name, name)) is None:
        return None
    return stopped(team, name)


def stopped_recipients(team: Team, names: Iterable[str]) -> list[WakeResult]:
    return [r for r in (_not_reading(team, n) for n in names) if r is not None]


def wait_read(team: Team, sent: dict[str, list[str]], timeout: float | None,
              by_lead: bool = True) -> dict[str, bool]:
    """Block until every recipient has read its messages; return who read. Raises
    RecipientStoppedError (exit 1) as soon as one has exited or died, WaitTimeoutError (exit
    124) after `timeout` seconds. The messages stay delivered either way."""
    deadline = None if timeout is None else time.monotonic() + timeout
    names = list(sent)
    with stores.team_watcher(team.name, [], False, names, reads=names) as watcher:
        next_check = 0.0
        while True:
            read = read_by(team.name, sent)  # after the watcher exists: nothing is missed
            waiting = [n for n, done in read.items() if not done]
            if not waiting:
                return read
            now = time.monotonic()
            if now >= next_check:
                gone = stopped_recipients(team, waiting)
                if gone:
                    raise RecipientStoppedError("; ".join(will_not_read(g.name, g.was, g.detail, by_lead) for g in gone))
                next_check = now + CHECK_EVERY
            remaining = None if deadline is None else deadline - now
            if remaining is not None and remaining <= 0:
                raise WaitTimeoutError(
                    f"{', '.join(waiting)} {'has' if len(waiting) == 1 else 'have'} not read "
                    f"the message after {timeout:g}s; it stays in the mailbox")
            watcher.wait(next_check - now if remaining is None else min(next_check - now,
                                                                          remaining))


class Receipt(Struct, frozen=True):
    """A message a member sent, to whom, and what became of it: unread, read, or answered
    (the recipient wrote back to the sender after reading it, or responded to its request)."""

    to: str
    state: str
    message: Message


def _request_id(message: Message) -> str | None:
    kind = message.structured()
    rid = getattr(kind, "request_id", None)
    return str(rid) if rid and kind is not None and kind.type.endswith("_request") else None


def _answers(reply: Message, sent: Message, rid: str | None) -> bool:
    kind = reply.structured()
    if rid is not None:  # a request: only a response to it counts
        return kind is not None and getattr(kind, "request_id", None) == rid
    # Plain text written back after the message; automatic notes (idle, terminated) are not.
    return kind is None and sent.read and reply.timestamp > sent.timestamp


def sent_by(team: Team, sender: str) -> list[Receipt]:
    """Every message `sender` sent (live and archived), oldest first, with its state."""
    everything = team_messages(team)
    back: dict[str, list[Message]] = {}
    for a in everything:
        if a.to == sender:
            back.setdefault(a.message.sender, []).append(a.message)
    out = []
    for a in everything:
        m = a.message
        if m.sender != sender or a.to == sender:
            continue
        rid = _request_id(m)
        if any(_answers(r, m, rid) for r in back.get(a.to, [])):
            state = "answered"
        else:
            state = "read" if m.read else "unread"
        out.append(Receipt(a.to, state, m))
    return out
