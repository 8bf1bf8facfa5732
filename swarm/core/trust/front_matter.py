"""A definition file's front matter as data: its YAML mapping and its body, and the spellings of
its keys. Read by the definitions' loader (core.agents.definitions) and by trust, which digests
and summarises the definition files of a project (core.trust.scripts, core.trust.summary)."""

from __future__ import annotations

import re
from typing import Any

from swarm.core.trust.config_files import ConfigProblem

# The seeds' spellings of the same fields (camelCase, dashed) are accepted as aliases.
_ALIASES = {"agent_type": "name", "when_to_use": "description",
            "omit_claude_md": "omit_project_memory"}



def field_name(key: str) -> str:
    """`maxTurns`, `max-turns`, `max_turns` -> `max_turns`; `agentType` -> `name`."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_")
    return _ALIASES.get(snake, snake)


def front_matter(text: str, path: str) -> tuple[dict[str, Any], str] | ConfigProblem:
    """A definition file's YAML front matter (a mapping) and its body, or what is wrong."""
    import frontmatter  # ~20 ms with PyYAML: only for files, never for the pre-parsed built-ins
    import yaml

    handler = frontmatter.YAMLHandler()
    text = text.removeprefix("\ufeff")
    meta: Any = {}
    body = text
    if handler.detect(text):
        raw, body = handler.split(text)
        try:
            meta = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            detail = " ".join(str(exc).split())
            return ConfigProblem(path=path, message=f"front matter is not valid YAML: {detail}")
        if meta is None:
            meta = {}
    if not isinstance(meta, dict):
        return ConfigProblem(path=path, message="front matter must be a YAML mapping of fields")
    return meta, body
