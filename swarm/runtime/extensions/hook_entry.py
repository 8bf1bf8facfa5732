"""One configured hook as a settings file writes it, checked by pydantic (one problem per bad
field): imported when a settings file has a hook entry (runtime/extensions/user_hooks.py)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_TIMEOUT = 60.0


class HookEntry(BaseModel):
    """One configured hook, as written in a settings file."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["command"] = "command"
    matcher: str | None = None
    command: str
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    env: dict[str, str] = Field(default_factory=dict)  # passed on purpose: {"NAME": "${NAME}"}

    @field_validator("command")
    @classmethod
    def _command(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty shell command")
        return value

    @field_validator("matcher")
    @classmethod
    def _matcher(cls, value: str | None) -> str | None:
        if value in (None, "", "*"):
            return None
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value
