"""Message models: the mailbox `Message` and the structured protocol messages carried in its text."""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal, get_args

from swarm.core.records import base as records
from swarm.core.records.base import Record, field
from swarm.core.records.names import LEAD_NAME
from swarm.core.store.disk import utcnow_iso
from swarm.errors import ProtocolError, TooLargeError

MAX_MESSAGE_BYTES = 256 * 1024
MAX_SUMMARY_BYTES = 1024


def check_size(what: str, text: str | None, limit: int) -> None:
    """Refuse a text field over `limit` UTF-8 bytes, before anything is written."""
    if text is not None and len(text) * 4 > limit and len(text.encode()) > limit:
        raise TooLargeError(f"{what} is {len(text.encode())} bytes; the limit is {limit} bytes")


def _new_id() -> str:
    return str(uuid.uuid4())


class Message(Record, kw_only=True):
    """One mailbox entry. `from` is a Python keyword, so the attribute is `sender`."""

    id: str = field(default_factory=_new_id)
    sender: str = field(name="from")
    text: str
    summary: str | None = None
    color: str | None = None
    timestamp: str = field(default_factory=utcnow_iso)
    read: bool = False
    # The lead's signature of an order (core.team.lead_key): what makes it the lead's, not its `from`.
    sig: str | None = None

    def structured(self) -> StructuredMessage | None:
        return parse_structured(self.text)


class _Structured(Record, kw_only=True, forbid_unknown_fields=True):
    """A protocol message: a JSON object in a message's text, tagged by its `type` field."""

    type: str


class IdleNotification(_Structured, kw_only=True):
    type: Literal["idle_notification"] = "idle_notification"
    sender: str = field(name="from")
    idle_reason: Literal["available", "interrupted", "failed", "budget_exhausted", "max_turns"] = (
        "available"
    )
    summary: str | None = None
    completed_task_id: str | None = None
    completed_status: str | None = None
    failure_reason: str | None = None
    # The sender's model calls so far (its state.json `turns`): a lead that sees the sender
    # idle with more turns than its newest note says knows a note is still on its way.
    turns: int | None = None


class ShutdownRequest(_Structured, kw_only=True):
    type: Literal["shutdown_request"] = "shutdown_request"
    request_id: str = field(default_factory=_new_id)
    reason: str | None = None


class ShutdownResponse(_Structured, kw_only=True):
    type: Literal["shutdown_response"] = "shutdown_response"
    request_id: str
    approve: bool
    reason: str | None = None

    def __post_init__(self) -> None:  # msgspec runs it after decoding and after __init__
        if not self.approve and not (self.reason or "").strip():
            raise ValueError("a shutdown_response that refuses must give a reason")


class PlanApprovalRequest(_Structured, kw_only=True):
    type: Literal["plan_approval_request"] = "plan_approval_request"
    request_id: str = field(default_factory=_new_id)
    plan: str


class PlanApprovalResponse(_Structured, kw_only=True):
    type: Literal["plan_approval_response"] = "plan_approval_response"
    request_id: str
    approve: bool
    feedback: str | None = None
    permission_mode: str | None = None


class PermissionRequest(_Structured, kw_only=True):
    type: Literal["permission_request"] = "permission_request"
    request_id: str = field(default_factory=_new_id)
    agent_id: str
    tool_name: str
    tool_use_id: str | None = None
    description: str = ""
    input: dict[str, Any] = {}  # msgspec copies an empty default per instance
    # Only a person answers it (an ask rule, a forbidden call that may be, a protected path, a
    # reviewer with no verdict): never the lead's model. `tier`: what asked
    # (core.records.permissions TIERS).
    person_only: bool = False
    tier: str | None = None


class PermissionResponse(_Structured, kw_only=True):
    type: Literal["permission_response"] = "permission_response"
    request_id: str
    approve: bool
    updated_input: dict[str, Any] | None = None
    always: bool = False
    feedback: str | None = None
    # Who answered: "person" (a shell, the lead's terminal), "lead" (its model), "timeout".
    by: str | None = None


class TaskAssignment(_Structured, kw_only=True):
    type: Literal["task_assignment"] = "task_assignment"
    task_id: str
    subject: str
    description: str = ""
    assigned_by: str


class ModeChange(_Structured, kw_only=True):
    """The lead sets a teammate's permission mode; it applies from the teammate's next tool
    call (`swarm mode`, the lead's SetMode)."""

    type: Literal["mode_change"] = "mode_change"
    mode: Literal["default", "acceptEdits", "plan", "auto", "bypassPermissions"]
    reason: str | None = None


class TeammateTerminated(_Structured, kw_only=True):
    type: Literal["teammate_terminated"] = "teammate_terminated"
    agent_id: str
    reason: str = ""


class FileConflict(_Structured, kw_only=True):
    """Two or more members sharing a checkout wrote the same file (sent once per path)."""

    type: Literal["file_conflict"] = "file_conflict"
    path: str
    members: list[str]


StructuredMessage = (
    IdleNotification
    | ShutdownRequest
    | ShutdownResponse
    | PlanApprovalRequest
    | PlanApprovalResponse
    | PermissionRequest
    | PermissionResponse
    | TaskAssignment
    | ModeChange
    | TeammateTerminated
    | FileConflict
)
# The protocol models by their `type` tag, read off the models themselves.
_BY_TYPE: dict[str, type[_Structured]] = {
    records.default_of(model, "type"): model for model in get_args(StructuredMessage)
}
STRUCTURED_TYPES = frozenset(_BY_TYPE)
_BOOLS = {tag: records.bool_fields(model) for tag, model in _BY_TYPE.items()}
# A model writes `"approve": "yes"` as often as `true`: these words are the booleans they name
# (Claude Code's semantic booleans), wherever a boolean comes from a model; nothing else is.
SEMANTIC_BOOLS = {"true": True, "yes": True, "false": False, "no": False}


def semantic_bool(value: object) -> object:
    """`"yes"`/`"true"` -> True, `"no"`/`"false"` -> False (any case, spaces around); any
    other value as it is (the validator then says what is wrong with it)."""
    if isinstance(value, str):
        return SEMANTIC_BOOLS.get(value.strip().lower(), value)
    return value


def _structured_dict(text: str) -> dict[str, Any] | None:
    """The JSON object in `text` when its `type` names a protocol message, else None."""
    if not text.lstrip().startswith("{") or '"type"' not in text:
        return None
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) and raw.get("type") in STRUCTURED_TYPES else None


def structured_type(text: str) -> str | None:
    """The `type` of the protocol message in `text`, None for plain text (no validation)."""
    if '"type"' not in text:  # most text: no JSON parse at all
        return None
    raw = _structured_dict(text)
    return None if raw is None else str(raw["type"])


def looks_structured(text: str) -> bool:
    """True when `text` is a JSON object whose `type` names a protocol message."""
    return _structured_dict(text) is not None


def structured_object(value: object) -> dict[str, Any] | None:
    """What a sender means by `value`, the one rule (Team.send, SendMessage): a dict is a
    protocol object (checked when sent); text is one when it is a JSON object whose `type` names
    a protocol message; anything else is plain text (None)."""
    if isinstance(value, dict):
        return value
    return _structured_dict(value) if isinstance(value, str) else None


def _validate(raw: dict[str, Any]) -> StructuredMessage:
    kind = raw["type"]
    if any(isinstance(raw.get(name), str) for name in _BOOLS[kind]):
        raw = {**raw, **{name: semantic_bool(raw[name]) for name in _BOOLS[kind] if name in raw}}
    return records.convert(raw, _BY_TYPE[kind])  # type: ignore[return-value]


def parse_structured(text: str) -> StructuredMessage | None:
    """The structured message in `text`, or None when it is plain text."""
    raw = _structured_dict(text)
    if raw is None:
        return None
    try:
        return _validate(raw)
    except records.ValidationError:
        return None


def validate_structured(value: dict[str, Any] | str) -> StructuredMessage:
    """Validate an object a caller wants to send; raise ProtocolError saying what is wrong."""
    try:
        raw = json.loads(value) if isinstance(value, str) else value
    except ValueError as exc:
        raise ProtocolError(f"malformed JSON message: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("type") not in STRUCTURED_TYPES:
        kinds = ", ".join(sorted(STRUCTURED_TYPES))
        raise ProtocolError(f"structured message needs a 'type' field, one of: {kinds}")
    try:
        return _validate(raw)
    except records.ValidationError as exc:
        raise ProtocolError(f"invalid {raw['type']} message: {exc}") from exc


def dump_structured(message: StructuredMessage) -> str:
    return records.encode(records.to_dict(message, drop_none=True)).decode()


# Who may send what (docs/design/messages.md); the receiver checks, whatever the file says.
LEAD_ONLY_TYPES = frozenset(
    {"shutdown_request", "permission_response", "plan_approval_response", "task_assignment",
     "mode_change"})


def sender_may_send(kind: StructuredMessage, sender: str) -> bool:
    """May `sender` (a member name) send this structured message? Requests must come from the
    member they name; the lead's answers and orders only from the lead. (Whether a
    `shutdown_response` answers the member that was asked is the asker's check.)"""
    if kind.type in LEAD_ONLY_TYPES:
        return sender == LEAD_NAME
    if isinstance(kind, PermissionRequest):
        return kind.agent_id.partition("@")[0] == sender
    return True


def escape(text: str, quote: bool = False) -> str:
    """Escape text wrapped in our markup, so no text can close a tag or forge another block."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


def render_for_model(message: Message) -> str:
    """How a mailbox message reaches a model's conversation."""
    attrs = f'from="{escape(message.sender, True)}"'
    if message.color:
        attrs += f' color="{escape(message.color, True)}"'
    if message.summary:
        attrs += f' summary="{escape(message.summary, True)}"'
    return f"<teammate-message {attrs}>{escape(message.text)}</teammate-message>"
