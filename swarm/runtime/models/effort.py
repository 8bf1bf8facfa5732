"""Effort (`low`, `medium`, `high`, `max`) mapped to each provider's own thinking setting: the
one table (docs/design/providers.md shows it).

A model request carries the effort (`ModelRequest.effort`); the provider's model turns it into
request fields with `mapped`, and the spawner warns once with `unsupported` when the model has
no such setting (the teammate then runs without it). No SDK is imported here.

- Anthropic, Bedrock, Vertex: models with adaptive thinking get `thinking: {type: adaptive}`
  and `output_config: {effort}` (`max` on Opus only, `high` elsewhere); older thinking models
  get `thinking: {type: enabled, budget_tokens}` with `max_tokens` raised by the budget (the
  budget must stay below it).
- OpenAI and Ollama (Chat Completions): `reasoning_effort` (`max` is `high`, the highest every
  reasoning model takes), with `max_completion_tokens` raised by the same budget: reasoning
  tokens count toward it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from msgspec import Struct

# Thinking tokens an effort may spend where a provider takes a budget (Anthropic's minimum is
# 1,024); also what max_tokens is raised by, so the reply keeps its own room.
BUDGETS = {"low": 2048, "medium": 8192, "high": 16384, "max": 32000}

# Anthropic's families, matched anywhere in the id (Bedrock's `anthropic.claude-...-v1:0`,
# Vertex's `claude-...@date` too).
ADAPTIVE = re.compile(r"claude-(opus|sonnet|haiku)-(4-[6-9]|[5-9])")  # adaptive + effort
MAX_EFFORT = re.compile(r"claude-opus-(4-[6-9]|[5-9])")  # output_config.effort `max`
BUDGETED = re.compile(r"claude-(3-7-sonnet|sonnet-4|opus-4|haiku-4)")  # thinking.budget_tokens
# OpenAI's reasoning models; Ollama's thinking models (its /v1 takes reasoning_effort).
OPENAI_REASONING = re.compile(r"(^|/)(o[1-9]|gpt-5|gpt-oss|codex)", re.I)
OLLAMA_THINKING = re.compile(r"^(qwen3|deepseek-r1|deepseek-v3\.1|gpt-oss|magistral"
                             r"|phi4-reasoning|cogito)", re.I)


class Mapped(Struct, frozen=True):
    """What an effort adds to one request: fields of its body, and tokens added to its cap."""

    params: dict[str, Any]
    extra_tokens: int = 0


def _anthropic(model: str, effort: str) -> Mapped | None:
    if ADAPTIVE.search(model):
        level = effort if effort != "max" or MAX_EFFORT.search(model) else "high"
        return Mapped({"thinking": {"type": "adaptive"}, "output_config": {"effort": level}},
                      BUDGETS[effort])
    if BUDGETED.search(model):
        return Mapped({"thinking": {"type": "enabled", "budget_tokens": BUDGETS[effort]}},
                      BUDGETS[effort])
    return None


def _reasoning(pattern: re.Pattern[str]) -> Callable[[str, str], Mapped | None]:
    def mapped(model: str, effort: str) -> Mapped | None:
        if not pattern.search(model):
            return None
        return Mapped({"reasoning_effort": "high" if effort == "max" else effort},
                      BUDGETS[effort])
    return mapped


# The one table: provider -> (model id, effort) -> what the request gets, None: no thinking.
TABLE: dict[str, Callable[[str, str], Mapped | None]] = {
    "anthropic": _anthropic, "bedrock": _anthropic, "vertex": _anthropic,
    "openai": _reasoning(OPENAI_REASONING), "ollama": _reasoning(OLLAMA_THINKING),
}


def mapped(provider: str, model: str, effort: str | None) -> Mapped | None:
    """The fields `effort` adds to a request of this model (None: no effort, or none to add)."""
    if effort is None:
        return None
    rule = TABLE.get(provider)
    return rule(model, effort) if rule is not None else None


def unsupported(provider: str, model: str, effort: str | None) -> str | None:
    """The one warning for an effort this model cannot take (None: it can, or none asked)."""
    if effort is None or mapped(provider, model, effort) is not None:
        return None
    what = f"{provider}:{model}" if provider in TABLE else model
    return (f"effort {effort}: model {what} has no thinking or reasoning setting swarm knows;"
            " it runs without one")
