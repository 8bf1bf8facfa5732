"""`swarm send` and `swarm inbox`. Kept free of the model SDK and libtmux: it must start fast."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from swarm.cli.caller import current_agent_name
from swarm.cli.common import (
    emit,
    json_option,
    mode_cap,
    open_team,
    team_option,
    terminal_width,
    to_jsonable,
)
from swarm.cli.completion import complete_member, complete_recipient
from swarm.cli.helptext import examples
from swarm.core.records import base as records
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import Message, parse_structured, structured_type
from swarm.core.team.state import looks_stopped
from swarm.core.text.readable import clip, flat, fold, structured_line, will_not_read
from swarm.errors import BadInputError
from swarm.ops.mail.messages import find_message


@click.command(epilog=examples(
    "swarm send worker 'also cover the error paths' --summary 'more tests'",
    "swarm send '*' 'stop and commit what you have'",
    "git diff | swarm send reviewer -",
    "swarm send worker 'one more: check the docs' --wake",
    "swarm send worker 'stop and commit' --wait-read --timeout 60"))
@click.argument("to", shell_complete=complete_recipient)
@click.argument("message")
@team_option
@click.option("--summary", "-s", default=None, help="Short preview of the message.")
@click.option("--from", "sender", default=None, shell_complete=complete_member,
              help="Sender (default: $SWARM_AGENT_ID or team-lead).")
@click.option("--wake", is_flag=True,
              help="Restart a recipient that exited (or died) so it handles the message.")
@click.option("--wait-read", is_flag=True,
              help="Return once the recipient has read it (taken it into its conversation).")
@click.option("--timeout", type=click.FloatRange(min=0), default=None, metavar="S",
              help="With --wait-read: give up after S seconds (exit 124).")
@json_option
def send(to: str, message: str, team_name: str | None, summary: str | None,
         sender: str | None, wake: bool, wait_read: bool, timeout: float | None,
         as_json: bool) -> None:
    """Send a message to a member, or '*' for all.

    MESSAGE may be - to read it from stdin. A recipient that has exited keeps the message in
    its mailbox; --wake starts it again (with its conversation) to handle it. --wait-read
    waits until every recipient has read it: exit 124 at --timeout, 1 at once when one has
    exited or died (the message stays in its mailbox either way).
    """
    if timeout is not None and not wait_read:
        raise BadInputError("--timeout needs --wait-read (it bounds the wait for the read)")
    team = open_team(team_name)
    text = _stdin_text() if message == "-" else message
    # An explicit --from (even '') is checked, never silently replaced by the default.
    who = sender if sender is not None else (current_agent_name() or LEAD_NAME)
    _cap_plan_mode(team, text)
    ids = team.send(to, text, sender=who, summary=summary)
    names = ([m.name for m in team.members() if m.name not in (who.lower(), LEAD_NAME)]
             if to == "*" else [to.lower()])
    stopped = _wake(team, names) if wake else _stopped(team, names)
    result: dict[str, Any] = {"to": to, "ids": ids, "stopped": [w.as_dict() for w in stopped]}
    head = f"sent to {to} ({len(ids)} message(s))"
    by_lead = who.lower() == LEAD_NAME
    if not wait_read:
        emit(result, as_json, lambda r: "\n".join(
            [head, *(w.describe(by_lead=by_lead) for w in stopped)]))
        return
    recipients = ([m.name for m in team.members() if m.name != who.lower()]
                  if to == "*" else [to.lower()])  # Team.send's order: its ids match
    _wait_read(team, dict(zip(recipients, ([i] for i in ids), strict=False)), stopped,
               timeout, by_lead, result, as_json, head)


def _wait_read(team: Any, sent: dict[str, list[str]], stopped: list[Any], timeout: float | None,
               by_lead: bool, result: dict[str, Any], as_json: bool, head: str) -> None:
    """`send --wait-read`: block until read. A recipient that exited or died (and was not
    woken) fails at once with one line; the send is reported on stdout either way."""
    from swarm.errors import RecipientStoppedError, WaitTimeoutError
    from swarm.ops.mail.receipts import read_by, wait_read

    lines = [head, *(w.describe(by_lead=by_lead) for w in stopped if w.woken)]
    started = time.monotonic()
    try:
        gone = [w for w in stopped if not w.woken]
        if gone:
            raise RecipientStoppedError("; ".join(will_not_read(w.name, w.was, w.detail, by_lead) for w in gone))
        result["read"] = wait_read(team, sent, timeout, by_lead)
    except (RecipientStoppedError, WaitTimeoutError):
        result["read"] = read_by(team.name, sent)
        emit(result, as_json, lambda r: "\n".join(lines))
        raise
    took = time.monotonic() - started
    emit(result, as_json, lambda r: "\n".join(
        [*lines, *(f"read by {name} ({took:.1f}s)" for name in r["read"])]))


def _stdin_text() -> str:
    """The message from stdin, which must be UTF-8 (read as bytes: a text stream would turn
    bad bytes into surrogates that fail later, mid-send)."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream handed in (tests, embedding)
        return sys.stdin.read()
    data = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"standard input is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                            f"offset {exc.start}); nothing was sent") from None


def _stopped(team: Any, names: list[str]) -> list[Any]:
    """Recipients that exited or died, for the hint (every send pays for the first look, so
    the ops module is imported only when one looks stopped)."""
    found = [n for n in names if n != LEAD_NAME and looks_stopped(team.name, n)]
    if not found:
        return []
    from swarm.ops.member.restart import stopped

    return [r for r in (stopped(team, name) for name in found) if r is not None]


def _wake(team: Any, names: list[str]) -> list[Any]:
    """Wake every stopped recipient (a dead one too); report those that were stopped."""
    from swarm.ops.member.restart import wake

    results = [wake(team, name, revive_dead=True) for name in names if name != LEAD_NAME]
    return [r for r in results if r.woken or r.was in ("exited", "dead")]


@click.command(epilog=examples(
    "swarm inbox", "swarm inbox --unread --mark-read", "swarm inbox worker --all --full",
    "swarm inbox show 3f2a9c1d", "swarm inbox --follow", "swarm inbox worker --sent"))
@click.argument("name", required=False, shell_complete=complete_member)
@click.argument("message_id", required=False, metavar="[ID]")
@team_option
@click.option("--unread", is_flag=True, help="Only unread messages.")
@click.option("--all", "include_archive", is_flag=True, help="Include archived (read) messages.")
@click.option("--full", is_flag=True, help="Every line of every message, not folded to a few.")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new messages as they arrive.")
@click.option("--mark-read", is_flag=True,
              help="Mark what is shown read (archived), but requests still to be answered.")
@click.option("--sent", is_flag=True,
              help="The messages NAME sent instead, each unread, read or answered.")
@json_option
def inbox(name: str | None, message_id: str | None, team_name: str | None, unread: bool,
          include_archive: bool, full: bool, follow: bool, mark_read: bool, sent: bool,
          as_json: bool) -> None:
    """Show a mailbox (default: team-lead's), or `inbox show ID` for one message, whole.

    Each message's text is folded to the terminal width (--full for all of it); structured
    messages are one line each. Reading does not mark messages read; --mark-read does (your
    own mailbox only). `show ID` finds the message in any mailbox or archive by an id prefix.
    --sent lists what NAME sent (read history too): unread, read (in the recipient's
    conversation), or answered (it wrote back after reading, or responded to the request).
    """
    team = open_team(team_name)
    if sent:
        _sent(team, name, message_id, unread, follow, mark_read, full, as_json)
        return
    if name == "show" and message_id is not None:
        _show(team, message_id, as_json)
        return
    if name == "show" and "show" not in {m.name for m in team.members()}:
        raise BadInputError("`swarm inbox show` needs a message ID (any start of it)")
    if message_id is not None:
        raise BadInputError(f"unexpected argument {message_id!r}: use `swarm inbox [NAME]` or "
                            "`swarm inbox show ID`")
    box = team.inbox(LEAD_NAME if name is None else name)
    if mark_read and box.name != (current_agent_name() or LEAD_NAME):
        raise BadInputError(f"--mark-read is for your own mailbox: marking {box.name}'s messages "
                            "read would take them from it")
    messages = box.messages(unread_only=unread, include_archive=include_archive and not unread)
    width = terminal_width() or 100
    emit(messages, as_json, lambda ms: _render(ms, width, full))
    if mark_read:
        # Permission requests and plans stay unread: `swarm permissions`/`plans` answer them.
        box.mark_read([m.id for m in messages if not m.read and not _awaits_answer(m)])
    if not follow:
        return
    seen = {m.id for m in messages}
    with box.watcher() as watcher:
        while True:
            fresh = [m for m in box.messages() if m.id not in seen]
            for message in fresh:
                seen.add(message.id)
                emit(message, as_json, lambda m: _render([m], width, full))
            sys.stdout.flush()
            watcher.wait(None if fresh else 1.0)
            time.sleep(0)  # let Ctrl-C land between waits


def _sent(team: Any, name: str | None, message_id: str | None, unread: bool, follow: bool,
          mark_read: bool, full: bool, as_json: bool) -> None:
    for flag, given in (("--follow", follow), ("--mark-read", mark_read),
                        ("message ID", message_id is not None)):
        if given:
            raise BadInputError(f"--sent takes no {flag}: it lists what NAME sent")
    from swarm.ops.mail.receipts import sent_by

    sender = team.member(name or LEAD_NAME).name
    rows = [r for r in sent_by(team, sender) if not unread or r.state == "unread"]
    width = terminal_width() or 100
    emit([{"to": r.to, "state": r.state, **to_jsonable(r.message)} for r in rows], as_json,
         lambda _: _render_sent(rows, width, full))


def _render_sent(rows: list[Any], width: int, full: bool) -> str:
    """One line per sent message: time, recipient, id, state, summary or structured line."""
    if not rows:
        return "(no messages sent)"
    out = []
    for r in rows:
        m = r.message
        head = f"{m.timestamp[11:19]} → {r.to} [{m.id[:8]}] {r.state:<8} "
        kind = m.structured()
        line = structured_line(kind) if kind is not None else flat(m.summary or m.text)
        out.append((head + (line if full else clip(line, max(width - len(head), 20)))).rstrip())
    return "\n".join(out)


def _awaits_answer(message: Message) -> bool:
    kind = message.structured()
    return kind is not None and kind.type in ("permission_request", "plan_approval_request")


FOLDED_LINES = 6  # lines of a message's text shown without --full


def _render(messages: Any, width: int, full: bool) -> str:
    """Per message: a head line (time, sender, new mark, id, summary or the structured line),
    then its plain text folded under it."""
    if not messages:
        return "(no messages)"
    out: list[str] = []
    for m in messages:
        head = f"{m.timestamp[11:19]} {m.sender} [{m.id[:8]}]{'' if m.read else ' *'} "
        kind = m.structured()
        line = structured_line(kind) if kind is not None else flat(m.summary or "")
        out.append((head + (line if full else clip(line, max(width - len(head), 20)))).rstrip())
        if kind is None and m.text.strip() and flat(m.text) != flat(m.summary or ""):
            out.extend(fold(m.text.rstrip(), width, "    ", None if full else FOLDED_LINES))
    if not full and any(t.startswith("    ... ") and t.endswith(" more lines") for t in out):
        out.append("(--full shows every line; `swarm inbox show ID` one message)")
    return "\n".join(out)


def _show(team: Any, message_id: str, as_json: bool) -> None:
    found = find_message(team, message_id)
    emit({"to": found.to, **to_jsonable(found.message)}, as_json, lambda _: _whole(found))


def _whole(found: Any) -> str:
    m = found.message
    lines = [f"id:      {m.id}", f"from:    {m.sender}", f"to:      {found.to}",
             f"time:    {m.timestamp}", f"read:    {'yes' if m.read else 'no'}"]
    if m.summary:
        lines.append(f"summary: {m.summary}")
    kind = m.structured()
    if kind is not None:
        lines += [f"type:    {structured_line(kind)}", "",
                  json.dumps(records.to_dict(kind, drop_none=True),
                             indent=2, ensure_ascii=False)]
    else:
        lines += ["", m.text]
    return "\n".join(lines)


def _cap_plan_mode(team: Any, text: str) -> None:
    """A plan approval sent by hand grants a mode too: capped as `plans approve --mode` is."""
    if structured_type(text) != "plan_approval_response":
        return
    kind = parse_structured(text)
    mode = getattr(kind, "permission_mode", None)
    cap = mode_cap(team) if mode else None
    if cap is not None:
        cap.check(str(mode))
