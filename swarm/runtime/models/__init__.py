"""Pick a model from a spec string: `shell`, `scripted:PATH`, or `[PROVIDER:]MODEL` (spec.py).

Each implementation is imported only when chosen, so a `shell` teammate never pays for an SDK
import; every provider's model implements the one-method `Model` protocol (base.py), so the
loop, tools, compaction, transcripts and subagents never know which provider they talk to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.records.names import validate_effort
from swarm.runtime.models.effort import unsupported
from swarm.runtime.models.spec import ModelSpec, check_model_spec, parse_model_spec, script_path

if TYPE_CHECKING:  # the spawn command needs default_model_spec only, not the model classes
    from swarm.runtime.models.base import Model

__all__ = ["ModelSpec", "check_model_spec", "default_effort", "default_model_spec",
           "effort_warning", "load_model", "parse_model_spec", "provider_of"]

NO_KEY_NOTICE = ("no Anthropic credentials (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN):"
                 " teammates use the offline shell model")


def load_model(spec: str, *, cwd: str | None = None, like: Model | None = None) -> Model:
    """The model a spec names (`scripted:PATH` relative to `cwd`). `like`: a model already
    loaded in this process; one of the same provider lends its HTTP client."""
    parsed = parse_model_spec(spec, parent=provider_of(like))
    if parsed.provider == "shell":
        from swarm.runtime.models.shell import ShellModel

        return ShellModel()
    if parsed.provider == "scripted":
        from swarm.runtime.models.scripted import ScriptedModel

        return ScriptedModel(str(script_path(parsed, cwd)))
    if settings.replay_dir():  # a replay never calls a provider (members get recorded.wrap's)
        from swarm.runtime.models.recording import NoProvider

        return NoProvider(parsed.text)
    sibling = getattr(like, "sibling", None)
    if sibling is not None and provider_of(like) == parsed.provider:
        return sibling(parsed.model)  # type: ignore[no-any-return]
    if parsed.provider in ("openai", "ollama"):
        from swarm.runtime.models.openai_model import OpenAIModel

        return OpenAIModel(parsed.model, provider=parsed.provider)
    from swarm.runtime.models.anthropic_model import AnthropicModel

    return AnthropicModel(parsed.model, provider=parsed.provider)


def provider_of(model: Model | None) -> str | None:
    """The provider a loaded model calls (None for the offline ones)."""
    return getattr(model, "provider", None)


def default_model_spec() -> tuple[str, str | None]:
    """(spec, notice): $SWARM_MODEL, else `sonnet` with Anthropic credentials, else `shell`
    plus a notice."""
    chosen = settings.model()
    if chosen:
        return chosen, None
    if settings.anthropic_credentials():
        return "sonnet", None
    return "shell", NO_KEY_NOTICE


def default_effort() -> str | None:
    """config.toml's `effort`, checked (a bad one: one line naming the file), or None."""
    value = settings.effort()
    return validate_effort(value, f"{settings.user_config().path}: effort") if value else None


def effort_warning(spec: str, effort: str | None) -> str | None:
    """The one warning at spawn for an effort the spec's model cannot take (None: it can)."""
    if effort is None:
        return None
    parsed = parse_model_spec(spec)
    if parsed.offline:
        return f"effort {effort}: model {parsed.text} does not think; it runs without one"
    return unsupported(parsed.provider, parsed.model, effort)
