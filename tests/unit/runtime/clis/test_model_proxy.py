"""The loopback proxy of an agent CLI teammate's model API (runtime.clis.model_proxy), with the
real Anthropic SDK as the CLI and the fake Messages API as the upstream: the token becomes the
key on the way, the CLI's header lines are added, a streamed answer streams through; a request
without this teammate's token is refused and never forwarded. `model_route` gives the CLI the
proxy only for a credential swarm can stand in for, and an environment with no secret in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anthropic
import pytest

from swarm.core import kinds
from swarm.runtime.clis.model_proxy import ModelProxy, model_route
from tests.support.fake_anthropic import FakeAnthropic

KEY = "sk-ant-real-key-5e0c9a"


@pytest.fixture
def proxy(fake_api: FakeAnthropic) -> Iterator[ModelProxy]:
    served = ModelProxy(fake_api.base_url, {"ANTHROPIC_API_KEY": KEY},
                        extra=[("x-gateway", "team-7")])
    served.start()
    yield served
    served.stop()


def ask(url: str, key: str, stream: bool = False) -> str:
    client = anthropic.Anthropic(base_url=url, api_key=key, max_retries=0)
    message = [{"role": "user", "content": "hi"}]
    if stream:
        with client.messages.stream(model="m", max_tokens=9, messages=message) as events:
            return "".join(events.text_stream)
    answer = client.messages.create(model="m", max_tokens=9, messages=message)
    return str(answer.content[0].text)  # type: ignore[union-attr]


def test_the_token_becomes_the_key_on_the_way(proxy: ModelProxy, fake_api: FakeAnthropic) -> None:
    fake_api.push_text("one")
    fake_api.push_text("streamed back")
    token = proxy.tokens["ANTHROPIC_API_KEY"]
    assert token != KEY and KEY not in token
    assert ask(proxy.url, token) == "one"
    assert ask(proxy.url, token, stream=True) == "streamed back"
    assert [r.api_key for r in fake_api.requests] == [KEY, KEY]
    assert {r.headers.get("x-gateway") for r in fake_api.requests} == {"team-7"}
    assert proxy.forwarded == 2


def test_a_request_without_the_token_is_never_forwarded(
        proxy: ModelProxy, fake_api: FakeAnthropic) -> None:
    for key in (KEY, "sk-some-other-token", proxy.tokens["ANTHROPIC_API_KEY"][:-1]):
        with pytest.raises(anthropic.AuthenticationError):
            ask(proxy.url, key)
    assert fake_api.requests == [] and proxy.refused == 3


def test_a_claude_code_teammate_gets_a_token_and_the_proxy(
        fake_api: FakeAnthropic, tmp_path: Path) -> None:
    environ = {"PATH": "/usr/bin", "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL":
               fake_api.base_url, "ANTHROPIC_CUSTOM_HEADERS": "x-tenant: blue",
               "SWARM_STORE": "redis://:storepass9@127.0.0.1:1/0", "CLAUDE_CONFIG_DIR": "/c"}
    route = model_route(kinds.agent_cli("claude-code"), environ, lambda line: None)
    assert route.proxy is not None
    try:
        env = route.env
        assert env["ANTHROPIC_BASE_URL"] == route.url != fake_api.base_url
        assert env["ANTHROPIC_API_KEY"] == route.proxy.tokens["ANTHROPIC_API_KEY"]
        assert "ANTHROPIC_CUSTOM_HEADERS" not in env and "SWARM_STORE" not in env
        assert env["CLAUDE_CONFIG_DIR"] == "/c" and "127.0.0.1" in env["NO_PROXY"]
        fake_api.push_text("hi")
        ask(str(route.url), env["ANTHROPIC_API_KEY"])
        assert fake_api.requests[-1].api_key == KEY
        assert fake_api.requests[-1].headers.get("x-tenant") == "blue"
    finally:
        route.proxy.stop()


@pytest.mark.parametrize("environ", [
    {"PATH": "/usr/bin"},  # signed in by its own login: nothing to stand in for
    {"ANTHROPIC_API_KEY": KEY, "CLAUDE_CODE_USE_BEDROCK": "1"},  # a cloud provider's signing
])
def test_no_proxy_where_swarm_cannot_stand_in(environ: dict[str, str]) -> None:
    route = model_route(kinds.agent_cli("claude-code"), environ, lambda line: None)
    assert route.proxy is None and route.env == environ


def test_a_codex_teammate_is_proxied_for_the_provider_its_config_names(
        tmp_path: Path, fake_api: FakeAnthropic) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(
        'model_provider = "azure"\n[model_providers.azure]\nname = "azure"\n'
        f'base_url = "{fake_api.base_url}/openai"\nenv_key = "AZURE_OPENAI_API_KEY"\n')
    environ = {"CODEX_HOME": str(home), "AZURE_OPENAI_API_KEY": KEY, "OPENAI_API_KEY": "sk-x"}
    route = model_route(kinds.agent_cli("codex"), environ, lambda line: None)
    assert route.proxy is not None
    try:
        assert route.provider == "azure" and str(route.url).endswith("/openai")
        assert route.env["AZURE_OPENAI_API_KEY"] == route.proxy.tokens["AZURE_OPENAI_API_KEY"]
        assert "OPENAI_API_KEY" not in route.env  # a secret it does not use: not passed
    finally:
        route.proxy.stop()


def test_a_kind_added_later_gets_the_same_boundary_from_its_entry(
        fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind registered at run time (an ACP agent, say) names its credential
    and its API's variable in its entry: they are secret by name for every shell, and its CLI
    gets the proxy and a token."""
    from swarm.core.trust.secrets import secret_by_name, without_secrets

    toy = kinds.TeammateKind(name="toy", title="Toy", executable="toy", driver="x:Y",
                             model_api=kinds.ModelApi(keys=("TOY_SECRET",),
                                                      base_url_var="TOY_API_URL"))
    monkeypatch.setattr(kinds, "_registered", [toy])
    assert secret_by_name("TOY_SECRET")
    assert without_secrets({"TOY_SECRET": KEY, "PATH": "/bin"}) == {"PATH": "/bin"}
    route = model_route(toy, {"TOY_SECRET": KEY, "TOY_API_URL": fake_api.base_url},
                        lambda line: None)
    assert route.proxy is not None
    try:
        assert route.env["TOY_API_URL"] == route.url
        assert route.env["TOY_SECRET"] == route.proxy.tokens["TOY_SECRET"] != KEY
    finally:
        route.proxy.stop()
