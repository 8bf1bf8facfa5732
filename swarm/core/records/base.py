"""Records: the typed JSON the processes share (team file, mailbox lines, tasks, state.json).

They are msgspec Structs, not pydantic models, for start-up: every `swarm` command and every
teammate reads them. msgspec adds ~37 M instructions (~20 ms) to a process that has click, and
validates without building anything; pydantic's import and the schema builds of the models a
command used cost ~300 M or more (PERFORMANCE.md, "CLI start-up"). Decoding validates types
strictly; unknown fields are ignored (older and newer versions share the files) except where a
class says `forbid_unknown_fields`. What a person writes (agent definition files, MCP servers,
hooks) and tool inputs stay pydantic, loaded at first use: they need its per-field error
reports and JSON Schemas.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import msgspec

R = TypeVar("R")

# Raised by `decode`/`convert` for malformed JSON or a wrong shape (ValidationError is a subclass).
DecodeError = msgspec.DecodeError
ValidationError = msgspec.ValidationError
field = msgspec.field


class Record(msgspec.Struct):
    """Base of every record. Each record class says `kw_only=True` (msgspec applies it to the
    fields a class defines itself), so a required field may follow a default."""


def decode(data: bytes | str, kind: type[R]) -> R:
    """Parse and validate JSON as `kind`; raises DecodeError (or its ValidationError)."""
    return msgspec.json.decode(data, type=kind)


def convert(value: Any, kind: type[R]) -> R:
    """Validate builtins (a dict from JSON, a tool's input) as `kind`; raises ValidationError."""
    return msgspec.convert(value, kind)


def _other(value: Any) -> Any:
    """A value no record type describes: a pydantic configuration model held in a record (an
    agent definition's MCP server spec) is written as its own JSON."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


def encode(record: Any, indent: int = 0) -> bytes:
    """JSON of a record, fields under their wire names (`from`), all of them, in order."""
    data = msgspec.json.encode(record, enc_hook=_other)
    return msgspec.json.format(data, indent=indent) if indent else data


def to_dict(record: Any, drop_none: bool = False) -> dict[str, Any]:
    """The record as JSON-ready builtins under its wire names; `drop_none` leaves out top-level
    fields that are None (as a protocol message is written)."""
    data: dict[str, Any] = msgspec.to_builtins(record, enc_hook=_other)
    return {k: v for k, v in data.items() if v is not None} if drop_none else data


def replace(record: R, **changes: Any) -> R:
    """A shallow copy with some fields changed (not validated, like the constructor)."""
    return msgspec.structs.replace(record, **changes)  # type: ignore[type-var]


def deep_copy(record: R) -> R:
    return copy.deepcopy(record)


def default_of(kind: type[Any], name: str) -> Any:
    """The default value of a record class's field `name`."""
    return next(f.default for f in msgspec.structs.fields(kind) if f.name == name)


def bool_fields(kind: type[Any]) -> tuple[str, ...]:
    """The encoded names of a record class's `bool` fields."""
    return tuple(f.encode_name for f in msgspec.structs.fields(kind) if f.type is bool)


def field_names(kind: type[Any]) -> tuple[str, ...]:
    """The attribute names of a record class, in order."""
    return tuple(kind.__struct_fields__)


def short_error(exc: Exception) -> str:
    """One line for a warning about a file that does not parse."""
    text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    return f"validation error: {text}" if isinstance(exc, ValidationError) else text
