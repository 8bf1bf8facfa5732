"""Every message of a team, whoever it was for: what `swarm inbox show` and the run report read.

Only the mailbox's public reading API is used (live messages and the archive), so the way a
mailbox stores them may change underneath.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec import Struct

from swarm.core.records.protocol import Message
from swarm.core.team.team import Team
from swarm.errors import BadInputError, NotFoundError


class Addressed(Struct, frozen=True):
    """A message and the member whose mailbox it is in."""

    to: str
    message: Message


def mailbox_messages(team: Team, name: str) -> list[Message]:
    """One mailbox, live and archived, each message once, oldest first."""
    box = team.inbox(name, checked=False)
    seen: dict[str, Message] = {}
    for message in [*box.archived(), *box.messages()]:
        seen[message.id] = message  # the live copy (read flag) wins over an archived one
    return sorted(seen.values(), key=lambda m: m.timestamp)


def team_messages(team: Team, names: Iterable[str] | None = None) -> list[Addressed]:
    """Every message in the mailboxes of `names` (default: the members), oldest first."""
    wanted = list(names) if names is not None else [m.name for m in team.members()]
    out = [Addressed(name, m) for name in dict.fromkeys(wanted)
           for m in mailbox_messages(team, name)]
    return sorted(out, key=lambda a: a.message.timestamp)


def find_message(team: Team, prefix: str) -> Addressed:
    """The one message whose id starts with `prefix`, in any member's mailbox or archive."""
    wanted = prefix.strip().lower()
    if not wanted:
        raise BadInputError("give a message id (or the start of one); see `swarm inbox`")
    found = [a for a in team_messages(team) if a.message.id.lower().startswith(wanted)]
    exact = [a for a in found if a.message.id.lower() == wanted]
    if exact:
        return exact[0]
    if not found:
        raise NotFoundError(f"no message with id {prefix!r} in team {team.name!r}; "
                            "see `swarm inbox NAME --all`")
    if len(found) > 1:
        shown = ", ".join(f"{a.message.id[:12]} (to {a.to})" for a in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        raise BadInputError(f"message id {prefix!r} is ambiguous: {shown}{more}; "
                            "give more of the id")
    return found[0]
