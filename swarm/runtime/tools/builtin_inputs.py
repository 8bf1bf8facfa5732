"""The inputs of the file and shell tools (tools/builtin.py), as pydantic models: imported at a
tool's first use, not when an agent starts (`Tool.input_ref`)."""

from __future__ import annotations

from swarm.runtime.tools.schema import Filled, SemanticBool, ToolInput


class FileInput(ToolInput):
    """Read, Write and Edit take their file from `file_path` only: a non-empty string. (A
    `path` beside a falsy `file_path` once passed the scope check and wrote a file named `0`.)"""

    file_path: Filled


class ReadInput(FileInput):
    offset: int | None = None
    limit: int | None = None


class WriteInput(FileInput):
    content: str


class EditInput(FileInput):
    old_string: str
    new_string: str
    replace_all: SemanticBool | None = None


class BashInput(ToolInput):
    command: str
    timeout: float | None = None
    description: str | None = None


class GlobInput(ToolInput):
    pattern: str
    path: str | None = None


class GrepInput(GlobInput):
    glob: str | None = None
