"""`[PROVIDER:]MODEL`: the one parser and the one check that a model can run here, made before
anything is registered (spawn, SpawnTeammate, the lead's models); ANTHROPIC_AUTH_TOKEN as
Anthropic credentials (what doctor says of each provider: tests/system/cli/test_model_spec.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.team.team import Team
from swarm.errors import BadInputError
from swarm.runtime.models import check_model_spec, default_model_spec, parse_model_spec
from swarm.runtime.models.anthropic_model import ALIASES, AnthropicModel
from swarm.runtime.models.base import ModelRequest
from swarm.runtime.models.providers import ollama_base_url
from tests.support.fake_anthropic import FakeAnthropic


@pytest.fixture(autouse=True)
def no_home_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws or gcloud credentials of this machine


@pytest.mark.parametrize(("spec", "provider", "model"), [
    ("sonnet", "anthropic", ALIASES["sonnet"]),
    ("claude-opus-4-1", "anthropic", "claude-opus-4-1"),
    ("anthropic:haiku", "anthropic", ALIASES["haiku"]),
    ("anthropic:glm-4.6", "anthropic", "glm-4.6"),  # anything, through a gateway
    ("openai:gpt-5-mini", "openai", "gpt-5-mini"),
    ("OpenAI:gpt-4o", "openai", "gpt-4o"),
    ("ollama:qwen3-coder:30b", "ollama", "qwen3-coder:30b"),  # the first colon only
    ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock",
     "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("vertex:claude-sonnet-4-5@20250929", "vertex", "claude-sonnet-4-5@20250929"),
    ("shell", "shell", "shell"),
    ("scripted:turns.json", "scripted", "turns.json"),
])
def test_parse(spec: str, provider: str, model: str) -> None:
    parsed = parse_model_spec(spec)
    assert (parsed.provider, parsed.model, parsed.text) == (provider, model, spec)


@pytest.mark.parametrize(("spec", "message"), [
    ("gpt-4o", "unknown model 'gpt-4o': use sonnet, opus, haiku, a claude-... model id, or"
               " PROVIDER:MODEL for another provider (anthropic, bedrock, vertex, openai,"
               " ollama), e.g. openai:gpt-4o"),
    ("qwen3-coder:30b", "unknown model provider 'qwen3-coder' in 'qwen3-coder:30b': use one of"
                        " anthropic, bedrock, vertex, openai, ollama (e.g. ollama:qwen3-coder:30b)"),
    ("openai:", "unknown model 'openai:': name the model after openai:"),
    ("openai:gpt 5", "unknown model 'openai:gpt 5': a model name has no spaces"),
    ("  ", "unknown model '': empty model name"),
    ("scripted:", "scripted model needs a file: scripted:PATH"),
    # a near miss names what was meant, not another provider's model of the typo's name
    ("sonet", "unknown model 'sonet': did you mean sonnet? Otherwise use a claude-... model id,"
              " or PROVIDER:MODEL for another provider (anthropic, bedrock, vertex, openai,"
              " ollama)"),
    ("Opuss", "unknown model 'Opuss': did you mean opus? Otherwise use a claude-... model id,"
              " or PROVIDER:MODEL for another provider (anthropic, bedrock, vertex, openai,"
              " ollama)"),
    ("opnai:gpt-4o", "unknown model provider 'opnai' in 'opnai:gpt-4o': did you mean"
                     " openai:gpt-4o? (providers: anthropic, bedrock, vertex, openai, ollama)"),
])
def test_parse_refuses_with_one_clear_line(spec: str, message: str) -> None:
    with pytest.raises(BadInputError) as info:
        parse_model_spec(spec)
    assert str(info.value) == message


def test_a_subagents_bare_id_keeps_its_parents_provider() -> None:
    assert parse_model_spec("gpt-5-nano", parent="openai").text == "openai:gpt-5-nano"
    assert parse_model_spec("haiku", parent="openai").provider == "anthropic"  # an alias is Anthropic's
    with pytest.raises(BadInputError):
        parse_model_spec("gpt-5-nano", parent="anthropic")


def refusal(spec: str, cwd: str | None = None) -> str:
    with pytest.raises(BadInputError) as info:
        check_model_spec(spec, cwd=cwd)
    return str(info.value)


def test_check_names_what_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert refusal("sonnet") == (
        "model sonnet cannot run here: anthropic needs credentials: set ANTHROPIC_API_KEY (or"
        " ANTHROPIC_AUTH_TOKEN for a gateway) (`swarm doctor` lists the providers)")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token")
    assert check_model_spec("sonnet") == "sonnet"

    assert "openai needs credentials: set OPENAI_API_KEY" in refusal("openai:gpt-5-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert check_model_spec(" openai:gpt-5-mini ") == "openai:gpt-5-mini"
    assert check_model_spec("ollama:qwen3-coder") == "ollama:qwen3-coder"  # no key needed

    assert "bedrock needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in (
        refusal("bedrock:anthropic.claude-x"))
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-key")
    assert "bedrock needs a region: set AWS_REGION" in refusal("bedrock:anthropic.claude-x")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    assert check_model_spec("bedrock:anthropic.claude-x") == "bedrock:anthropic.claude-x"

    assert "vertex needs credentials: set GOOGLE_APPLICATION_CREDENTIALS" in refusal("vertex:c")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "adc.json"))
    assert "vertex needs a region: set CLOUD_ML_REGION" in refusal("vertex:c")
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    assert "vertex needs a project: set ANTHROPIC_VERTEX_PROJECT_ID" in refusal("vertex:c")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj")
    assert check_model_spec("vertex:c") == "vertex:c"

    assert "cannot read script" in refusal("scripted:missing.json", cwd=str(tmp_path))
    (tmp_path / "bad.json").write_text("{nope")
    assert "does not parse" in refusal("scripted:bad.json", cwd=str(tmp_path))


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "botocore" else real(name, *a))
    assert ("the bedrock provider needs the optional `bedrock` extra: pip install"
            " 'swarm-teams[bedrock]' (pipx: pipx inject swarm-teams 'anthropic[bedrock]')"
            ) in refusal("bedrock:anthropic.claude-x")

    def no_google(name: str, *args: object) -> object:
        if name.startswith("google"):  # what find_spec does for `google.auth` without `google`
            raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", no_google)
    assert "the vertex provider needs the optional `vertex` extra: pip install 'swarm-teams[" \
        "vertex]'" in refusal("vertex:claude-x")


def test_ollama_host_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ollama_base_url() == "http://127.0.0.1:11434/v1"
    for given, url in (("gpu-box", "http://gpu-box:11434/v1"),
                       ("10.0.0.5:8080", "http://10.0.0.5:8080/v1"),
                       ("https://ollama.example/", "https://ollama.example:11434/v1"),
                       ("http://h:1/v1", "http://h:1/v1")):
        monkeypatch.setenv("OLLAMA_HOST", given)
        assert ollama_base_url() == url


def test_auth_token_alone_reaches_the_messages_api(fake_api: FakeAnthropic,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token")
    assert default_model_spec() == ("sonnet", None)  # credentials, so not the shell fallback
    fake_api.push_text("via the gateway")
    reply = AnthropicModel("sonnet").complete(ModelRequest("sys", [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}], []))
    assert reply.text() == "via the gateway"
    (sent,) = fake_api.requests
    assert sent.headers["authorization"] == "Bearer gateway-token"
    assert "x-api-key" not in sent.headers


def test_an_agent_definitions_model_is_checked_before_registering(swarm_home: Path) -> None:
    from swarm.ops.member.spawner import SpawnRequest, spawn

    agents = swarm_home / "agents"
    agents.mkdir(parents=True)
    (agents / "cheap.md").write_text("---\nname: cheap\ndescription: a cheap worker\n"
                                     "model: openai:gpt-5-mini\n---\nYou work cheaply.\n")
    team = Team.create("t")
    with pytest.raises(BadInputError, match="set OPENAI_API_KEY"):
        spawn(team, SpawnRequest("w", agent_type="cheap", backend="hidden", cwd=str(swarm_home)))
    assert [m.name for m in team.members()] == ["team-lead"]
