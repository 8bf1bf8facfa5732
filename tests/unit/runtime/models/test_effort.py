"""Effort and thinking at the model interface: the real `anthropic` and `openai` SDKs against
the fake servers (tests/support/fake_anthropic.py, tests/support/fake_openai.py). Each effort becomes its
provider's own parameter; thinking blocks come back whole (signature and all, streamed or
not) and go out again as the next request's history; thinking tokens are counted apart."""

from __future__ import annotations

import json
from typing import Any

import pytest

from swarm.core.records.names import EFFORT_LEVELS
from swarm.runtime.models.anthropic_model import AnthropicModel
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.effort import BUDGETS, unsupported
from swarm.runtime.models.openai_model import OpenAIModel, to_chat_messages
from swarm.runtime.models.prices import cost_usd
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI

THINKING = {"type": "thinking", "thinking": "The user wants a listing; ls will do.",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xl"}
TOOLS = [{"name": "Bash", "description": "Run a command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def ask(effort: str | None = None, messages: list[dict[str, Any]] | None = None,
        **kw: Any) -> ModelRequest:
    return ModelRequest("You are w1.", messages or [
        {"role": "user", "content": [{"type": "text", "text": "list files"}]}], TOOLS,
        effort=effort, **kw)


@pytest.mark.parametrize("effort", EFFORT_LEVELS)
def test_anthropic_adaptive_models_get_thinking_and_the_effort(
        fake_api: FakeAnthropic, effort: str) -> None:
    AnthropicModel("opus").complete(ask(effort))
    AnthropicModel("sonnet").complete(ask(effort))
    opus, sonnet = fake_api.messages_requests()
    assert opus["thinking"] == {"type": "adaptive"}
    assert opus["output_config"] == {"effort": effort}
    # `max` is Opus's only: Sonnet's highest is high.
    assert sonnet["output_config"] == {"effort": "high" if effort == "max" else effort}
    assert opus["max_tokens"] == 4096 + BUDGETS[effort]


@pytest.mark.parametrize("effort", EFFORT_LEVELS)
def test_anthropic_budget_models_get_a_budget_below_max_tokens(
        fake_api: FakeAnthropic, effort: str) -> None:
    AnthropicModel("claude-sonnet-4-5-20250929").complete(ask(effort))
    (body,) = fake_api.messages_requests()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS[effort]}
    assert body["max_tokens"] > body["thinking"]["budget_tokens"] >= 1024
    assert "output_config" not in body


def test_no_effort_sends_no_thinking(fake_api: FakeAnthropic) -> None:
    AnthropicModel("opus").complete(ask())
    (body,) = fake_api.messages_requests()
    assert "thinking" not in body and "output_config" not in body and body["max_tokens"] == 4096


@pytest.mark.parametrize("streamed", [False, True])
def test_thinking_blocks_come_back_whole_and_go_out_again(
        fake_api: FakeAnthropic, streamed: bool) -> None:
    fake_api.push_message([THINKING, REDACTED, {"type": "text", "text": "Listing."},
                           {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                            "input": {"command": "ls"}}], stop_reason="tool_use",
                          usage={"output_tokens": 50,
                                 "output_tokens_details": {"thinking_tokens": 30}})
    shown: list[str] = []
    model = AnthropicModel("opus")
    reply = model.complete(ask("high", on_text=shown.append if streamed else None))
    assert reply.content[:2] == [THINKING, REDACTED]  # signature and data intact, in order
    assert [b["type"] for b in reply.content[2:]] == ["text", "tool_use"]
    assert "".join(shown) == ("Listing." if streamed else "")  # the pane never shows thinking
    assert (reply.usage.output_tokens, reply.usage.thinking_tokens) == (20, 30)
    assert reply.usage.total_tokens == 12 + 50
    assert reply.usage.cost_usd == pytest.approx(
        cost_usd(model.name, reply.usage.__class__(input_tokens=12, output_tokens=50)))

    history = [*ask().messages, {"role": "assistant", "content": reply.content},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}]
    model.complete(ask("high", history))
    sent = fake_api.messages_requests()[-1]["messages"][1]["content"]
    assert sent[:2] == [THINKING, REDACTED]  # first in the assistant turn, byte for byte


def test_openai_reasoning_effort_and_reasoning_tokens(fake_openai: FakeOpenAI) -> None:
    fake_openai.push_message([{"type": "text", "text": "ok"}], usage={
        "output_tokens": 40, "output_tokens_details": {"thinking_tokens": 25}})
    reply = OpenAIModel("o3").complete(ask("medium"))
    for effort in EFFORT_LEVELS:
        OpenAIModel("gpt-5-mini").complete(ask(effort))
    first, *rest = fake_openai.completions_requests()
    assert first["reasoning_effort"] == "medium"
    assert first["max_completion_tokens"] == 4096 + BUDGETS["medium"]
    assert [b["reasoning_effort"] for b in rest] == ["low", "medium", "high", "high"]
    assert (reply.usage.output_tokens, reply.usage.thinking_tokens) == (15, 25)


def test_a_model_without_reasoning_gets_no_parameter_and_one_warning(
        fake_openai: FakeOpenAI) -> None:
    OpenAIModel("gpt-4o").complete(ask("high"))
    (body,) = fake_openai.completions_requests()
    assert "reasoning_effort" not in body and body["max_completion_tokens"] == 4096
    line = unsupported("openai", "gpt-4o", "high")
    assert line is not None and "gpt-4o" in line and "effort high" in line
    assert unsupported("anthropic", "claude-3-5-haiku-20241022", "low") is not None
    assert unsupported("ollama", "llama3.2", "low") is not None
    for provider, model in (("anthropic", "claude-opus-5-5"), ("openai", "o4-mini"),
                            ("ollama", "qwen3:8b"), ("bedrock", "anthropic.claude-sonnet-4-5"
                                                                "-20250929-v1:0")):
        assert unsupported(provider, model, "high") is None, model
    assert unsupported("openai", "gpt-4o", None) is None  # no effort asked: nothing to say


def test_chat_completions_never_see_thinking_blocks() -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
               {"role": "assistant", "content": [THINKING, REDACTED,
                                                 {"type": "text", "text": "Hello."}]}]
    sent = json.dumps(to_chat_messages("sys", history))
    assert THINKING["signature"] not in sent and REDACTED["data"] not in sent
    assert "ls will do" not in sent and "Hello." in sent


def test_ollama_thinking_models_get_reasoning_effort(
        fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_openai.base_url)
    OpenAIModel("qwen3:8b", provider="ollama").complete(ask("low"))
    OpenAIModel("llama3.2", provider="ollama").complete(ask("low"))
    thinking, plain = fake_openai.completions_requests()
    assert thinking["reasoning_effort"] == "low"
    assert thinking["max_tokens"] == 4096 + BUDGETS["low"]
    assert "reasoning_effort" not in plain and plain["max_tokens"] == 4096


def test_a_tool_cycle_begun_without_thinking_finishes_without_it(fake_api: FakeAnthropic) -> None:
    """The API refuses budgeted thinking on while the open cycle's assistant message has no
    thinking block (an effort set on a respawn or a resume mid-cycle): that one request goes
    without. Adaptive thinking skips steps by itself: its fields stay (and its cache)."""
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": "a.txt"}]}
    start = ask().messages
    AnthropicModel("opus").complete(ask("high", [*start, {"role": "assistant", "content": [use]},
                                                 result]))
    model = AnthropicModel("claude-sonnet-4-5-20250929")
    model.complete(ask("high", [*start, {"role": "assistant", "content": [use]}, result]))
    model.complete(ask("high", [*start, {"role": "assistant", "content": [THINKING, use]},
                                result]))
    model.complete(ask("high", [*start, {"role": "assistant", "content": [use]}, result,
                                {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                                {"role": "user", "content": [{"type": "text", "text": "next"}]}]))
    adaptive, without, cycle, next_turn = fake_api.messages_requests()
    assert adaptive["thinking"] == {"type": "adaptive"}
    assert "thinking" not in without and without["max_tokens"] == 4096
    assert cycle["thinking"] == next_turn["thinking"] == {"type": "enabled",
                                                          "budget_tokens": BUDGETS["high"]}
