"""`swarm send` and `swarm inbox`. Kept free of the model SDK and libtmux: it must start fast."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from swarm.cli.common import (
    current_agent_name,
    emit,
    json_option,
    open_team,
    refuse_teammate,
    table,
    team_option,
)
from swarm.core.names import LEAD_NAME
from swarm.core.protocol import Message
from swarm.errors import BadInputError


@click.command()
@click.argument("to")
@click.argument("message")
@team_option
@click.option("--summary", "-s", default=None, help="Short preview of the message.")
@click.option("--from", "sender", default=None, help="Sender (default: $SWARM_AGENT_ID or team-lead).")
@json_option
def send(to: str, message: str, team_name: str | None, summary: str | None,
         sender: str | None, as_json: bool) -> None:
    """Send a message to a member, or '*' for all.

    MESSAGE may be - to read it from stdin.
    """
    if sender is not None:
        refuse_teammate("send --from")
    team = open_team(team_name)
    text = sys.stdin.read() if message == "-" else message
    # An explicit --from (even '') is checked, never silently replaced by the default.
    who = sender if sender is not None else (current_agent_name() or LEAD_NAME)
    ids = team.send(to, text, sender=who, summary=summary)
    emit({"to": to, "ids": ids}, as_json, lambda r: f"sent to {to} ({len(r['ids'])} message(s))")


@click.command()
@click.argument("name", required=False)
@team_option
@click.option("--unread", is_flag=True, help="Only unread messages.")
@click.option("--all", "include_archive", is_flag=True, help="Include archived (read) messages.")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new messages as they arrive.")
@click.option("--mark-read", is_flag=True,
              help="Mark what is shown read (archived), but requests still to be answered.")
@json_option
def inbox(name: str | None, team_name: str | None, unread: bool, include_archive: bool,
          follow: bool, mark_read: bool, as_json: bool) -> None:
    """Show a mailbox (default: team-lead's).

    Reading does not mark messages read; --mark-read does (your own mailbox only).
    """
    team = open_team(team_name)
    box = team.inbox(LEAD_NAME if name is None else name)
    if mark_read and box.name != (current_agent_name() or LEAD_NAME):
        raise BadInputError(f"--mark-read is for your own mailbox: marking {box.name}'s messages "
                            "read would take them from it")
    messages = box.messages(unread_only=unread, include_archive=include_archive and not unread)
    emit(messages, as_json, _render)
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
                emit(message, as_json, lambda m: _render([m]))
            sys.stdout.flush()
            watcher.wait(None if fresh else 1.0)
            time.sleep(0)  # let Ctrl-C land between waits


def _awaits_answer(message: Message) -> bool:
    kind = message.structured()
    return kind is not None and kind.type in ("permission_request", "plan_approval_request")


def _render(messages: Any) -> str:
    if not messages:
        return "(no messages)"
    rows = []
    for m in messages:
        kind = m.structured()
        preview = kind.type if kind is not None else (m.summary or m.text)
        preview = preview.replace("\n", " ")
        rows.append([m.timestamp[11:19], m.sender, " " if m.read else "*",
                     preview[:70], m.id[:8]])
    return table(rows, ["TIME", "FROM", "NEW", "SUMMARY", "ID"])
