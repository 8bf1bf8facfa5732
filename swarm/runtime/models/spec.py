"""A model spec, `[PROVIDER:]MODEL` | `shell` | `scripted:PATH`: parsed, and checked once.

`parse_model_spec` is the syntax (no I/O); `check_model_spec` is the one check that a model can
run here (its provider's credentials, a script that exists and parses), made before anything
is registered or started: by `swarm spawn`, SpawnTeammate, `swarm lead --model` and
`--teammate-model`, and a subagent's `model`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from msgspec import Struct

from swarm import settings
from swarm.errors import BadInputError
from swarm.runtime.models.anthropic_model import ALIASES
from swarm.runtime.models.providers import PROVIDERS

OFFLINE = ("shell", "scripted")
NEAR = 0.75  # how alike a typo and what was meant are (difflib's ratio: sonet/sonnet 0.91)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"  # package data: the scripted demos


class ModelSpec(Struct, frozen=True):
    provider: str  # one of PROVIDERS, or "shell" / "scripted"
    model: str  # the provider's model id (an Anthropic alias resolved), or the script's path
    text: str  # as written, stripped

    @property
    def offline(self) -> bool:
        return self.provider in OFFLINE


def _near(word: str, choices: Iterable[str]) -> str | None:
    """The one choice `word` is a typo of (`sonet`: sonnet), or None."""
    import difflib  # only for a refusal

    close = difflib.get_close_matches(word.lower(), list(choices), n=1, cutoff=NEAR)
    return close[0] if close else None


def _hint(model: str) -> str:
    return (f"use {', '.join(ALIASES)}, a claude-... model id, or PROVIDER:MODEL for another"
            f" provider ({', '.join(PROVIDERS)}), e.g. openai:{model}")


def parse_model_spec(spec: str, *, parent: str | None = None) -> ModelSpec:
    """The spec's provider and model id, or a clear error. `parent`: the provider of the agent
    asking (a subagent): a bare id that is not Anthropic's stays on the parent's provider."""
    text = spec.strip()
    lower = text.lower()
    if not text:
        raise BadInputError("unknown model '': empty model name")
    if lower == "shell":
        return ModelSpec("shell", "shell", text)
    if lower.startswith("scripted:"):
        path = text.split(":", 1)[1].strip()
        if not path:
            raise BadInputError("scripted model needs a file: scripted:PATH")
        return ModelSpec("scripted", path, text)
    if any(c.isspace() for c in text):
        raise BadInputError(f"unknown model {spec!r}: a model name has no spaces")
    head, sep, rest = text.partition(":")
    if sep:
        provider = head.lower()
        if provider not in PROVIDERS:
            near = _near(provider, PROVIDERS)
            if near:
                raise BadInputError(f"unknown model provider {head!r} in {text!r}: did you mean"
                                    f" {near}:{rest}? (providers: {', '.join(PROVIDERS)})")
            raise BadInputError(f"unknown model provider {head!r} in {text!r}: use one of"
                                f" {', '.join(PROVIDERS)} (e.g. ollama:{text})")
        if not rest:
            raise BadInputError(f"unknown model {text!r}: name the model after {head}:")
        model = ALIASES.get(rest.lower(), rest) if provider == "anthropic" else rest
        return ModelSpec(provider, model, text)
    if lower in ALIASES or lower.startswith("claude-"):
        if lower.startswith("claude-") and len(lower) == len("claude-"):
            raise BadInputError(f"unknown model {spec!r}: {_hint('MODEL')}")
        return ModelSpec("anthropic", ALIASES.get(lower, text), text)
    if parent in PROVIDERS and parent != "anthropic":
        return ModelSpec(parent, text, f"{parent}:{text}")
    near = _near(text, ALIASES)
    if near:
        raise BadInputError(f"unknown model {spec!r}: did you mean {near}? Otherwise use a"
                            " claude-... model id, or PROVIDER:MODEL for another provider"
                            f" ({', '.join(PROVIDERS)})")
    raise BadInputError(f"unknown model {spec!r}: {_hint(text)}")


def script_path(spec: ModelSpec, cwd: str | None) -> Path:
    """A scripted model's file, relative to the agent's cwd. `examples/NAME` that the cwd does
    not have is the installed package's own (docs/scripted.md's commands work anywhere)."""
    path = Path(spec.model).expanduser()
    if path.is_absolute():
        return path
    here = Path(cwd or os.getcwd()) / path
    if not here.exists() and len(path.parts) == 2 and path.parts[0] == EXAMPLES.name:
        packaged = EXAMPLES / path.parts[1]
        if packaged.is_file():
            return packaged
    return here


def check_model_spec(spec: str, *, cwd: str | None = None, parent: str | None = None) -> str:
    """The spec (stripped) when its model can run here, else a BadInputError naming what to set
    (exit 2 from the CLI, an error result for a model's tool call)."""
    parsed = parse_model_spec(spec, parent=parent)
    if parsed.provider == "scripted":
        from swarm.runtime.models.scripted import load_turns

        load_turns(script_path(parsed, cwd))  # a missing or broken script fails here
    elif not parsed.offline and not settings.replay_dir():  # a replay calls no provider
        problem = PROVIDERS[parsed.provider].problem()
        if problem:
            raise BadInputError(f"model {parsed.text} cannot run here: {problem}"
                                " (`swarm doctor` lists the providers)")
    return parsed.text
