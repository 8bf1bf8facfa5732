"""`openai:` and `ollama:` models through the real `openai` SDK against the suite's fake Chat
Completions server (tests/support/fake_openai.py): the mapping both ways, streaming, usage and cost,
retries, errors; and the price table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.state import Usage, cost_text
from swarm.errors import ModelAPIError
from swarm.runtime.models import load_model
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.openai_model import IMAGE_NOTE, OpenAIModel
from swarm.runtime.models.prices import cost_usd, price_for
from tests.support.fake_openai import FakeOpenAI

TOOLS = [{"name": "Bash", "description": "Run a command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                           "required": ["command"]}}]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def request(messages: list[dict[str, Any]] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest(system=kw.pop("system", "You are w1."), tools=kw.pop("tools", TOOLS),
                        messages=messages or [{"role": "user", "content": [
                            {"type": "text", "text": "hi"}]}], **kw)


def test_a_conversation_maps_to_chat_completions_and_back(fake_openai: FakeOpenAI) -> None:
    fake_openai.push_tool_use("Bash", {"command": "ls"}, id="call_2", text="Looking.")
    history = [
        {"role": "user", "content": [{"type": "text", "text": "list files"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "pwd"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "/work"},
            {"type": "text", "text": "<teammate-message>also this</teammate-message>"},
            {"type": "image", "source": {"type": "base64", "data": "xx"}}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "call_9", "name": "Bash", "input": {"command": "false"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_9",
                                      "content": [{"type": "text", "text": "exit 1"}],
                                      "is_error": True}]},
    ]
    reply = OpenAIModel("gpt-5-mini").complete(request(history))

    (body,) = fake_openai.completions_requests()
    assert fake_openai.requests[0].api_key == "sk-test"
    assert body["model"] == "gpt-5-mini" and body["max_completion_tokens"] == 4096
    assert "stream" not in body  # no on_text: one JSON reply
    assert body["tools"] == [{"type": "function", "function": {
        "name": "Bash", "description": "Run a command.", "parameters": TOOLS[0]["input_schema"]}}]
    assert body["messages"] == [
        {"role": "system", "content": "You are w1."},
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "Sure.", "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "Bash", "arguments": '{"command": "pwd"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "/work"},
        {"role": "user", "content": f"<teammate-message>also this</teammate-message>\n\n{IMAGE_NOTE}"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "call_9", "type": "function",
            "function": {"name": "Bash", "arguments": '{"command": "false"}'}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "Error: exit 1"},
    ]
    assert reply.stop_reason == "tool_use"
    assert reply.content == [{"type": "text", "text": "Looking."},
                             {"type": "tool_use", "id": "call_2", "name": "Bash",
                              "input": {"command": "ls"}}]


def test_streamed_text_tool_calls_and_usage(fake_openai: FakeOpenAI) -> None:
    fake_openai.push_message([
        {"type": "text", "text": "Running two commands for you now."},
        {"type": "tool_use", "id": "call_a", "name": "Bash", "input": {"command": "echo a"}},
        {"type": "tool_use", "id": "call_b", "name": "Bash", "input": {"command": "echo b"}}],
        stop_reason="tool_use",
        usage={"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 4000})
    pieces: list[str] = []
    reply = OpenAIModel("gpt-5-mini").complete(request(on_text=pieces.append))

    (body,) = fake_openai.completions_requests()
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert len(pieces) > 1 and "".join(pieces) == "Running two commands for you now."
    assert [(b["id"], b["input"]) for b in reply.tool_uses()] == [
        ("call_a", {"command": "echo a"}), ("call_b", {"command": "echo b"})]
    u = reply.usage
    # prompt_tokens 5000 of which 4000 cached: input 1000, cache reads 4000.
    assert (u.input_tokens, u.cache_read_input_tokens, u.output_tokens) == (1000, 4000, 200)
    # gpt-5-mini: $0.25 in, $0.025 cached, $2 out per Mtok.
    assert u.cost_usd == pytest.approx((1000 * 0.25 + 4000 * 0.025 + 200 * 2.0) / 1e6)
    assert u.cost_known


def test_retries_429_and_5xx_then_succeeds(fake_openai: FakeOpenAI) -> None:
    fake_openai.push_error(429)
    fake_openai.push_error(503)
    fake_openai.push_text("finally")
    assert OpenAIModel("gpt-5-mini").complete(request()).text() == "finally"
    assert len(fake_openai.completions_requests()) == 3


def test_errors_are_one_clear_line(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_openai.required_api_key = "sk-right"
    with pytest.raises(ModelAPIError) as info:
        OpenAIModel("gpt-5-mini").complete(request())
    assert str(info.value).startswith("OpenAI API 401: ")
    assert str(info.value).endswith("(check OPENAI_API_KEY)")
    assert len(fake_openai.requests) == 1  # never retried

    fake_openai.required_api_key = None
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "1")
    for _ in range(2):
        fake_openai.push_error(500)
    with pytest.raises(ModelAPIError, match=r"^OpenAI API 500 after 2 attempts: fake error 500$"):
        OpenAIModel("gpt-5-mini").complete(request())

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "0")
    with pytest.raises(ModelAPIError, match=r"OpenAI API at http://127.0.0.1:9/v1/ unreachable"):
        OpenAIModel("gpt-5-mini").complete(request())


def test_ollama_calls_ollama_host_v1_with_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI() as server:
        host = server.base_url.removeprefix("http://")  # Ollama's own bare host:port form
        monkeypatch.setenv("OLLAMA_HOST", host)
        server.push_tool_use("Bash", {"command": "ls"})
        model = load_model("ollama:qwen3-coder:30b")
        reply = model.complete(request())
        (received,) = server.requests
    assert received.path == "/v1/chat/completions"
    assert received.body["model"] == "qwen3-coder:30b" and received.body["max_tokens"] == 4096
    assert reply.tool_uses()[0]["input"] == {"command": "ls"}
    assert reply.usage.cost_usd == 0 and reply.usage.cost_known  # local: free, not n/a


def test_a_subagent_model_reuses_the_parents_client(fake_openai: FakeOpenAI) -> None:
    parent = load_model("openai:gpt-5")
    child = load_model("gpt-5-nano", like=parent)  # a bare id stays on the parent's provider
    assert isinstance(child, OpenAIModel) and child.name == "gpt-5-nano"
    assert child._client is parent._client
    child.complete(request())
    assert fake_openai.completions_requests()[0]["model"] == "gpt-5-nano"


def test_prices_known_unknown_and_added(swarm_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd("gpt-4o", usage, "openai") == pytest.approx(12.5)
    assert cost_usd("openai/gpt-4o-mini", usage, "openai") == pytest.approx(0.75)  # OpenRouter id
    assert price_for("openai", "deepseek-chat") is None  # no price: n/a, not $0
    assert price_for("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0").input == 3.0
    assert price_for("vertex", "claude-haiku-4-5@20251001").output == 5.0

    swarm_home.mkdir(parents=True, exist_ok=True)
    (swarm_home / "prices.json").write_text(json.dumps({
        "openai:deepseek-chat": [0.27, 1.1], "kimi-k2": {"input": 0.6, "output": 2.5}}))
    assert cost_usd("deepseek-chat", usage, "openai") == pytest.approx(1.37)
    assert cost_usd("kimi-k2-0905", usage, "openai") == pytest.approx(3.1)  # by prefix
    assert price_for("ollama", "deepseek-chat").input == 0  # the key names its provider

    (swarm_home / "prices.json").write_text('{"gpt-4o": {"input": "cheap"}}')
    assert cost_usd("gpt-4o", usage, "openai") == pytest.approx(12.5)  # built-ins still apply
    err = capsys.readouterr().err
    assert err.count("swarm: warning: ") == 1 and "prices.json: model 'gpt-4o'" in err
    cost_usd("gpt-4o", usage, "openai")
    assert capsys.readouterr().err == ""  # warned once per change of the file


def test_unpriced_usage_shows_n_a() -> None:
    total = Usage()
    total.add(Usage(input_tokens=5, cost_usd=0.5))
    assert cost_text(total.cost_usd, total.cost_known) == "$0.5000"
    total.add(Usage(input_tokens=5, cost_known=False))
    assert cost_text(total.cost_usd, total.cost_known) == "$0.5000+n/a"
    assert cost_text(0.0, False) == "n/a"
