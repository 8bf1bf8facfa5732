"""Pick a model from a spec string: `shell`, `scripted:PATH`, or an Anthropic alias/id.

Each implementation is imported only when chosen, so a `shell` teammate never pays for the
`anthropic` SDK import.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from swarm import settings
from swarm.errors import BadInputError
from swarm.runtime.models.anthropic_model import ALIASES, AnthropicModel
from swarm.runtime.models.scripted import ScriptedModel
from swarm.runtime.models.shell import ShellModel

if TYPE_CHECKING:  # the spawn command needs default_model_spec only, not the model classes
    from swarm.runtime.models.base import Model

NO_KEY_NOTICE = "no ANTHROPIC_API_KEY: teammates use the offline shell model"


def load_model(spec: str, *, cwd: str | None = None, like: Model | None = None) -> Model:
    """`shell` | `scripted:PATH` (relative to `cwd`) | `sonnet`/`opus`/`haiku`/`claude-...`.
    `like`: a model already loaded in this process; an Anthropic one lends its HTTP client."""
    spec = spec.strip()
    if not spec:
        raise BadInputError("empty model name")
    if spec.lower() == "shell":

        return ShellModel()
    if spec.lower().startswith("scripted:"):
        raw = spec.split(":", 1)[1].strip()
        if not raw:
            raise BadInputError("scripted model needs a file: scripted:PATH")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = Path(cwd or os.getcwd()) / path

        return ScriptedModel(str(path))

    if isinstance(like, AnthropicModel):
        return like.sibling(spec)
    return AnthropicModel(spec)


def check_model_spec(spec: str) -> str:
    """A model name an agent may ask for (a subagent's `model`): an Anthropic alias, a
    `claude-` id, `shell` or `scripted:PATH`. Anything else is a clear error before any call."""
    value = spec.strip()
    lowered = value.lower()
    if (lowered in ALIASES or lowered == "shell" or lowered.startswith("scripted:")
            or (lowered.startswith("claude-") and not any(c.isspace() for c in value))):
        return value
    raise BadInputError(f"unknown model {spec!r}: use {', '.join(ALIASES)}, a claude-... model id,"
                        " or inherit (the parent's model)")


def default_model_spec() -> tuple[str, str | None]:
    """(spec, notice): $SWARM_MODEL, else `sonnet` with an API key, else `shell` plus a notice."""
    chosen = settings.model()
    if chosen:
        return chosen, None
    if settings.api_key():
        return "sonnet", None
    return "shell", NO_KEY_NOTICE
