"""User-written JSON config files (settings.json, mcp.json, .mcp.json): read, never rewritten.

A broken file is the user's to fix, so unlike swarm's own files it is never moved aside: the
reader gets one problem naming the file (and the field, when one is at fault) and goes on with
whatever else is valid.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm.core.records.base import Record

if TYPE_CHECKING:
    from pydantic import ValidationError

    from swarm.core.trust.workspace import ConfigFile


class ConfigProblem(Record, kw_only=True):
    path: str
    field: str | None = None
    message: str

    def __str__(self) -> str:
        where = f"field {self.field!r}: " if self.field else ""
        return f"{self.path}: {where}{self.message}"


def read_json_object(path: Path) -> tuple[dict[str, Any] | None, ConfigProblem | None]:
    """The file's top-level object; (None, None) when it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, ConfigProblem(path=str(path), message=f"cannot read: {exc}")
    return parse_json_object(text, str(path))


def parse_json_object(text: str, path: str) -> tuple[dict[str, Any] | None, ConfigProblem | None]:
    """`text` (the content of `path`) as a top-level object, or the problem with it."""
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, ConfigProblem(path=path, message=(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); ignoring the file"))
    if not isinstance(data, dict):
        return None, ConfigProblem(path=path, message="must be a JSON object; ignoring the file")
    return data, None


def read_config_file(file: ConfigFile) -> tuple[dict[str, Any] | None, ConfigProblem | None]:
    """A project file as it was read for the trust digest (never read again: what was trusted
    is what is used)."""
    try:
        text = file.text()
    except (OSError, UnicodeDecodeError) as exc:
        return None, ConfigProblem(path=str(file.path), message=f"cannot read: {exc}")
    return parse_json_object(text, str(file.path))


def problems_of(error: ValidationError, path: str, prefix: str) -> list[ConfigProblem]:
    """One problem per pydantic error, with its field as `prefix.loc`."""
    out = []
    for err in error.errors():
        loc = ".".join(str(p) for p in err["loc"])
        field = f"{prefix}.{loc}" if loc else prefix
        out.append(ConfigProblem(path=path, field=field,
                                 message=str(err["msg"]).removeprefix("Value error, ")))
    return out
