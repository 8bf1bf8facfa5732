"""The lead's key: what makes an order provably the lead's.

Each team has a random 32-byte key, made with the team: on the file store
`teams/<team>/lead.key` (0600, hex), on Redis the key `swarm:<team>:lead_key`. Whoever leads
(a person's shell, `swarm lead`, `swarm mcp serve` as lead: a `swarm` process with no teammate
among its ancestors, `cli.caller.current_agent_name`) signs each lead-only order it sends
(`protocol.LEAD_ONLY_TYPES`) with HMAC-SHA256 over the team, the recipient, the sender, the
message's id, time, summary and text (`Message.sig`). A member obeys such an order only with a
valid signature for itself (`LeadSeal.allows`); any other is plain text from its claimed sender.
The key is never put in an environment; a teammate's process reads it to check, its Bash commands
are not given it (docs/design/trust.md "Control messages" says what a same-user process can still do).
hmac and hashlib load only when an order is signed or checked: a plain `swarm send` needs neither.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import LEAD_ONLY_TYPES, Message, StructuredMessage, sender_may_send
from swarm.core.store import select as stores
from swarm.errors import SwarmError

if TYPE_CHECKING:
    pass

KEY_BYTES = 32
_DOMAIN = b"swarm-lead-order-v1"


def create_key(team: str) -> bytes:
    """The team's key, made now unless it exists (a team made before keys: made by its lead's
    first order). Never replaced: orders already sent stay valid."""
    store = stores.team_store()
    store.add_lead_key(team, os.urandom(KEY_BYTES).hex())
    found = read_key(team)
    if found is None:  # one was there, but it is not a key: never sign with a guessable one
        raise SwarmError(f"the lead's key of team {team!r} ({store.lead_key_location(team)}) is"
                         f" not a key of {KEY_BYTES} bytes in hex; remove it (a new one is made"
                         " by the next order) and send again")
    return found


def read_key(team: str) -> bytes | None:
    """The team's key, None when it has none (or it does not read as one: then nothing from
    the lead is obeyed until it is put right, never a key anyone could guess)."""
    raw = stores.team_store().lead_key(team)
    try:
        key = bytes.fromhex(raw.decode().strip()) if raw else b""
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == KEY_BYTES else None


def _digest(key: bytes, team: str, recipient: str, message: Message) -> str:
    import hashlib
    import hmac

    fields = (_DOMAIN, team, recipient, message.sender, message.id, message.timestamp,
              message.summary or "", message.text)
    data = b"\0".join(f if isinstance(f, bytes) else f.encode() for f in fields)
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def sign(team: str, recipient: str, message: Message) -> str:
    """The signature of `message` to `recipient` (the key is made if the team has none)."""
    key = read_key(team) or create_key(team)
    return _digest(key, team, recipient, message)


def is_order(kind: StructuredMessage | None) -> bool:
    """An order or answer only the lead gives (what must be signed)."""
    return kind is not None and kind.type in LEAD_ONLY_TYPES


class LeadSeal:
    """How member `recipient` checks what it is about to obey. The key is read on the first
    order and kept (read again while the team has none)."""

    def __init__(self, team: str, recipient: str) -> None:
        self.team, self.recipient = team, recipient
        self._key: bytes | None = None

    def vouches(self, message: Message) -> bool:
        """Is `message` signed by the lead, for this recipient?"""
        if message.sender != LEAD_NAME or not message.sig:
            return False
        if self._key is None:
            self._key = read_key(self.team)
            if self._key is None:
                return False
        import hmac

        return hmac.compare_digest(
            message.sig, _digest(self._key, self.team, self.recipient, message))

    def allows(self, kind: StructuredMessage, message: Message) -> bool:
        """May this member act on `kind` from `message`? Its sender may send it, and a lead's
        order carries the lead's signature."""
        if not sender_may_send(kind, message.sender):
            return False
        return not is_order(kind) or self.vouches(message)
