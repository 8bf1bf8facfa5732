"""What a model call cost: one price table for every provider, plus `$SWARM_HOME/prices.json`.

Prices are USD per million tokens. Claude models are priced by family wherever they run
(Anthropic, Bedrock's `anthropic.claude-...`, Vertex's `claude-...@date`); a Claude id we cannot
place is charged like the dearest tier, so `--max-budget-usd` still bites. Any other model
without a price costs "n/a" (`Usage.cost_known` false), never a made-up number. Ollama runs
locally: $0.

`prices.json` adds or overrides prices: `{"openai:my-model": {"input": 0.5, "output": 1.5,
"cache_read": 0.05}, "deepseek-chat": [0.27, 1.1]}`. A key is a model id or prefix, optionally
`provider:`-qualified. A file that does not parse is one warning and is ignored.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from msgspec import Struct

from swarm.core.records import base as records
from swarm.core.records.state import Usage
from swarm.core.store import paths
from swarm.core.store.disk import warn
from swarm.core.store.filecache import ChangeCache


class Price(Struct, frozen=True):
    input: float
    output: float
    cache_read: float | None = None  # default: a tenth of input (Anthropic's and most others')
    cache_write: float | None = None  # default: 1.25 x input (Anthropic's 5-minute cache)


CLAUDE: dict[str, Price] = {
    "claude-opus-4-0": Price(15.0, 75.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4-2025": Price(15.0, 75.0),
    "claude-3-opus": Price(15.0, 75.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-opus": Price(5.0, 25.0),
    "claude-sonnet": Price(3.0, 15.0),
    "claude-haiku": Price(1.0, 5.0),
}
FAMILIES: dict[str, Price] = {"opus": Price(5.0, 25.0), "sonnet": Price(3.0, 15.0),
                              "haiku": Price(1.0, 5.0)}
DEAREST = Price(15.0, 75.0)

# Other providers' list prices (input, output, cached input), matched by longest id prefix.
OTHERS: dict[str, Price] = {
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1": Price(2.0, 8.0, 0.50),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "o3": Price(2.0, 8.0, 0.50),
}

_FREE = Price(0.0, 0.0, 0.0, 0.0)
_lock = threading.Lock()
_user_cache: tuple[Path, ChangeCache[dict[str, Price]]] | None = None  # SWARM_HOME may change


def _parse_price(value: Any) -> Price:
    if isinstance(value, list) and len(value) == 2:
        value = {"input": value[0], "output": value[1]}
    if not isinstance(value, dict) or not {"input", "output"} <= set(value):
        raise ValueError('expected {"input": N, "output": N} or [input, output]')
    numbers = {}
    for key in ("input", "output", "cache_read", "cache_write"):
        raw = value.get(key)
        if raw is None:
            continue
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
            raise ValueError(f"{key} must be a number >= 0 (USD per million tokens)")
        numbers[key] = float(raw)
    unknown = set(value) - {"input", "output", "cache_read", "cache_write"}
    if unknown:
        raise ValueError(f"unknown field {sorted(unknown)[0]!r}")
    return Price(**numbers)


def user_prices() -> dict[str, Price]:
    """`$SWARM_HOME/prices.json`, re-read when it changes; {} (with one warning) when broken."""
    global _user_cache
    path = paths.home() / "prices.json"
    with _lock:
        if _user_cache is None or _user_cache[0] != path:
            _user_cache = (path, ChangeCache.of_file(path, _load_and_warn))
        cache = _user_cache[1]
    return cache.get()


def _load_and_warn() -> dict[str, Price]:
    prices, problem = load_user_prices()
    if problem:
        warn(problem)
    return prices


def load_user_prices() -> tuple[dict[str, Price], str | None]:
    """(prices, the problem with the file or None). A missing file is no problem."""
    path = paths.home() / "prices.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {}, f"{path}: not valid JSON ({exc}); using the built-in prices only"
    if not isinstance(data, dict):
        return {}, f"{path}: must be a JSON object of model -> price; using the built-in prices only"
    prices = {}
    for key, value in data.items():
        try:
            prices[str(key).strip().lower()] = _parse_price(value)
        except ValueError as exc:
            return {}, f"{path}: model {key!r}: {exc}; using the built-in prices only"
    return prices, None


def _longest(table: dict[str, Price], *ids: str) -> Price | None:
    for mid in ids:
        hits = [key for key in table if mid.startswith(key)]
        if hits:
            return table[max(hits, key=len)]
    return None


def price_for(provider: str, model_id: str) -> Price | None:
    """The model's price, or None when it has none (its cost is n/a)."""
    mid = model_id.lower()
    user = _longest(user_prices(), f"{provider}:{mid}", mid)
    if user is not None:
        return user
    if provider == "ollama":
        return _FREE
    at = mid.find("claude-")
    family = next((p for name, p in FAMILIES.items() if name in mid), None)
    if at >= 0:
        return _longest(CLAUDE, mid[at:]) or family or DEAREST
    if family is not None and provider in ("anthropic", "bedrock", "vertex"):
        return family
    return _longest(OTHERS, mid.rsplit("/", 1)[-1])  # `openai/gpt-4o` (OpenRouter) too


def price_usage(provider: str, model_id: str, usage: Usage) -> Usage:
    """Set the usage's cost from the table (or mark it n/a); returns the usage."""
    price = price_for(provider, model_id)
    if price is None:
        usage.cost_usd, usage.cost_known = 0.0, False
        return usage
    cache_read = price.input * 0.1 if price.cache_read is None else price.cache_read
    cache_write = price.input * 1.25 if price.cache_write is None else price.cache_write
    usage.cost_usd = (usage.input_tokens * price.input
                      + usage.cache_creation_input_tokens * cache_write
                      + usage.cache_read_input_tokens * cache_read
                      + (usage.output_tokens + usage.thinking_tokens) * price.output) / 1_000_000
    return usage


def cost_usd(model_id: str, usage: Usage, provider: str = "anthropic") -> float:
    """What `usage` of this model costs (0.0 when it has no price)."""
    return price_usage(provider, model_id, records.replace(usage)).cost_usd
