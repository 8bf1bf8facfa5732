"""The Anthropic model through the real SDK, against the local fake Messages API server."""

from __future__ import annotations

import copy
import socket
from pathlib import Path
from typing import Any, get_args

import pytest

from swarm.core.records.state import Usage
from swarm.errors import BadInputError, ModelAPIError, OperationFailedError, SwarmError
from swarm.runtime.models import NO_KEY_NOTICE, default_model_spec, load_model, parse_model_spec
from swarm.runtime.models.anthropic_model import ALIASES, AnthropicModel, resolve_model_id
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.prices import cost_usd
from tests.support.fake_anthropic import FakeAnthropic

TOOLS = [
    {"name": "Bash", "description": "Run a command.",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
    {"name": "SendMessage", "description": "Message a teammate.",
     "input_schema": {"type": "object", "properties": {"to": {"type": "string"}}}},
]


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("HOME", str(tmp_path))  # no user-level Anthropic profile can leak in
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
                "SWARM_API_MAX_RETRIES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")


def request(text: str = "hello", **kw: Any) -> ModelRequest:
    return ModelRequest(
        system=kw.pop("system", "You are alice on team demo."),
        messages=kw.pop("messages", [{"role": "user", "content": [{"type": "text", "text": text}]}]),
        tools=kw.pop("tools", TOOLS),
        **kw,
    )


def test_text_reply(fake_api: FakeAnthropic) -> None:
    fake_api.push_text("Hi lead, all done.")
    reply = AnthropicModel("sonnet").complete(request())
    assert reply.content == [{"type": "text", "text": "Hi lead, all done."}]
    assert reply.stop_reason == "end_turn"
    assert reply.text() == "Hi lead, all done."
    assert reply.tool_uses() == []


def test_tool_use_reply(fake_api: FakeAnthropic) -> None:
    fake_api.push_tool_use("Bash", {"command": "echo hi"}, id="toolu_01", text="Running it.")
    reply = AnthropicModel("haiku").complete(request())
    assert reply.stop_reason == "tool_use"
    assert reply.content == [
        {"type": "text", "text": "Running it."},
        {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "echo hi"}},
    ]
    assert all(type(b) is dict for b in reply.content)


def test_overloaded_then_success_is_retried(fake_api: FakeAnthropic) -> None:
    fake_api.push_error(529)
    fake_api.push_text("second time lucky")
    reply = AnthropicModel("sonnet").complete(request())
    assert reply.text() == "second time lucky"
    bodies = fake_api.messages_requests()
    assert len(bodies) == 2
    assert bodies[0] == bodies[1]


def test_rate_limit_and_server_error_are_retried(fake_api: FakeAnthropic) -> None:
    fake_api.push_error(429)
    fake_api.push_error(500)
    fake_api.push_text("ok")
    assert AnthropicModel("sonnet").complete(request()).text() == "ok"
    assert len(fake_api.requests) == 3


def test_exhausted_retries_give_one_line_error(fake_api: FakeAnthropic) -> None:
    for _ in range(3):
        fake_api.push_error(529)
    with pytest.raises(OperationFailedError) as info:
        AnthropicModel("sonnet", max_retries=2).complete(request())
    msg = str(info.value)
    assert "\n" not in msg
    assert "529 overloaded_error after 3 attempts: Overloaded" in msg
    assert len(fake_api.requests) == 3
    assert fake_api.pending() == 0


def test_what_the_server_received(fake_api: FakeAnthropic) -> None:
    fake_api.push_text("ok")
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "<teammate-message from=\"lead\">go</teammate-message>"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "a.txt\n"}]},
    ]
    req = request(messages=messages, max_tokens=1234)
    before = copy.deepcopy(req)
    AnthropicModel("sonnet").complete(req)
    assert req == before  # the caller's conversation is not mutated

    (got,) = fake_api.requests
    assert got.method == "POST" and got.path == "/v1/messages"
    assert got.api_key == "test-key"
    assert "anthropic-version" in got.headers
    body = got.body
    assert body["model"] == ALIASES["sonnet"]
    assert body["max_tokens"] == 1234
    assert body["system"] == [{"type": "text", "text": "You are alice on team demo.",
                               "cache_control": {"type": "ephemeral"}}]
    assert [t["name"] for t in body["tools"]] == ["Bash", "SendMessage"]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][1]["input_schema"] == TOOLS[1]["input_schema"]
    # the conversation goes as given, with one cache breakpoint on its last block
    assert body["messages"][:2] == messages[:2]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "a.txt\n",
         "cache_control": {"type": "ephemeral"}}]


def test_no_tools_and_no_system_are_omitted(fake_api: FakeAnthropic) -> None:
    AnthropicModel("claude-custom-1").complete(request(system="", tools=[]))
    body = fake_api.requests[0].body
    assert body["model"] == "claude-custom-1"
    assert "system" not in body and "tools" not in body
    assert fake_api.requests[0].api_key == "test-key"


def test_blank_blocks_and_empty_messages_are_not_sent(fake_api: FakeAnthropic) -> None:
    messages = [
        {"role": "user", "content": "plain string"},
        {"role": "assistant", "content": []},  # the API may answer a tool result with nothing
        {"role": "user", "content": [{"type": "text", "text": "  "},
                                     {"type": "text", "text": "next"}]},
    ]
    AnthropicModel("sonnet").complete(request(messages=messages))
    sent = fake_api.requests[0].body["messages"]
    assert sent == [
        {"role": "user", "content": [{"type": "text", "text": "plain string"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "(no content)"}]},
        {"role": "user", "content": [{"type": "text", "text": "next",
                                      "cache_control": {"type": "ephemeral"}}]},
    ]


def test_usage_and_cost_recorded(fake_api: FakeAnthropic) -> None:
    fake_api.push_text("ok", usage={"input_tokens": 1000, "output_tokens": 500,
                                    "cache_creation_input_tokens": 2000,
                                    "cache_read_input_tokens": 10000})
    reply = AnthropicModel("sonnet").complete(request())
    u = reply.usage
    assert (u.input_tokens, u.output_tokens) == (1000, 500)
    assert (u.cache_creation_input_tokens, u.cache_read_input_tokens) == (2000, 10000)
    # sonnet at $3/$15 per Mtok: 1000*3 + 2000*3*1.25 + 10000*3*0.1 + 500*15 = 21000 micro-$
    assert u.cost_usd == pytest.approx(0.021)
    total = Usage()
    total.add(u)
    total.add(u)
    assert total.cost_usd == pytest.approx(0.042)


def test_cost_table() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd("claude-opus-4-1", usage) == pytest.approx(90.0)
    assert cost_usd(ALIASES["opus"], usage) == pytest.approx(30.0)
    assert cost_usd(ALIASES["haiku"], usage) == pytest.approx(6.0)
    assert cost_usd("claude-unknown-9", usage) == pytest.approx(90.0)  # priced conservatively


def test_bad_key_gives_clear_error_without_retry(fake_api: FakeAnthropic,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fake_api.required_api_key = "test-key"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong-key")
    with pytest.raises(SwarmError) as info:
        AnthropicModel("sonnet").complete(request())
    msg = str(info.value)
    assert isinstance(info.value, ModelAPIError) and info.value.exit_code == 1
    assert msg == ("Anthropic API 401 authentication_error: invalid x-api-key "
                   "(check ANTHROPIC_API_KEY)")
    assert len(fake_api.requests) == 1


def test_bad_request_is_not_retried(fake_api: FakeAnthropic) -> None:
    fake_api.push_error(400, message="messages: roles must alternate")
    with pytest.raises(ModelAPIError, match="400 invalid_request_error: messages: roles"):
        AnthropicModel("sonnet").complete(request())
    assert len(fake_api.requests) == 1


def test_unreachable_server_retries_then_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    with pytest.raises(ModelAPIError, match=rf"127\.0\.0\.1:{port}.* unreachable after 2 attempts"):
        AnthropicModel("sonnet", max_retries=1).complete(request())


def test_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ModelAPIError, match="no Anthropic credentials .* set ANTHROPIC_API_KEY"):
        AnthropicModel("sonnet")


def test_only_the_fake_server_is_contacted(fake_api: FakeAnthropic,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    connects: list[Any] = []
    real_connect = socket.socket.connect

    def recording_connect(self: socket.socket, address: Any) -> None:
        connects.append(address)
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    model = AnthropicModel("opus")
    assert model.base_url.rstrip("/") == fake_api.base_url
    fake_api.push_error(529)
    model.complete(request())
    assert len(fake_api.requests) == 2
    assert connects and all(tuple(a[:2]) == ("127.0.0.1", fake_api.port) for a in connects)


def test_aliases_are_current_sdk_ids() -> None:
    from anthropic._data.deprecated_models import DEPRECATED_MODELS
    from anthropic.types.model_param import ModelParam

    known = set(get_args(get_args(ModelParam)[0]))
    for alias, model_id in ALIASES.items():
        assert resolve_model_id(alias) == model_id
        assert resolve_model_id(alias.upper()) == model_id
        assert model_id in known, model_id
        assert model_id not in DEPRECATED_MODELS
    assert resolve_model_id("claude-opus-4-1-20250805") == "claude-opus-4-1-20250805"
    for bad in ("", "   ", "son net"):  # the one spec check refuses them, before any model
        with pytest.raises(BadInputError):
            parse_model_spec(bad)


def test_load_model_and_default_spec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    model = load_model("haiku")
    assert isinstance(model, AnthropicModel) and model.name == ALIASES["haiku"]
    assert load_model("shell").name == "shell"
    project = tmp_path / "proj"
    project.mkdir()
    (project / "turns.json").write_text('[{"text": "scripted hello"}]')
    scripted = load_model("scripted:turns.json", cwd=str(project))  # relative to the agent's cwd
    assert scripted.complete(request()).text() == "scripted hello"
    with pytest.raises(BadInputError, match="scripted:PATH"):
        load_model("scripted:")
    with pytest.raises(BadInputError):
        load_model("  ")

    assert default_model_spec() == ("sonnet", None)
    monkeypatch.setenv("SWARM_MODEL", "scripted:turns.json")
    assert default_model_spec() == ("scripted:turns.json", None)
    monkeypatch.delenv("SWARM_MODEL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert default_model_spec() == ("shell", NO_KEY_NOTICE)
    assert "\n" not in NO_KEY_NOTICE


def test_streaming_hands_the_text_over_as_it_comes(fake_api: FakeAnthropic) -> None:
    """With `on_text` the SDK's streaming API is used: the text arrives in pieces (what a pane
    shows live), and the reply is the same as without streaming."""
    said = "Let me run the tests now, then I will report back."
    fake_api.push_tool_use("Bash", {"command": "make test"}, id="toolu_s1", text=said,
                           usage={"input_tokens": 40, "output_tokens": 25})
    pieces: list[str] = []
    reply = AnthropicModel("sonnet").complete(request(on_text=pieces.append))
    assert len(pieces) > 1 and "".join(pieces) == said
    assert reply.content == [{"type": "text", "text": said},
                             {"type": "tool_use", "id": "toolu_s1", "name": "Bash",
                              "input": {"command": "make test"}}]
    assert reply.stop_reason == "tool_use"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (40, 25)
    assert fake_api.messages_requests()[-1]["stream"] is True


def test_streaming_is_retried_like_any_request(fake_api: FakeAnthropic) -> None:
    fake_api.push_error(529)
    fake_api.push_text("ok, now it works")
    pieces: list[str] = []
    reply = AnthropicModel("sonnet").complete(request(on_text=pieces.append))
    assert "".join(pieces) == reply.text() == "ok, now it works"
    assert len(fake_api.messages_requests()) == 2
