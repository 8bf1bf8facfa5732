"""Claude on Bedrock and Vertex through the anthropic SDK's own clients, pointed at the local
fakes in tests/support/fake_clouds.py: the request each client builds (path, signature or token, body
with prompt caching), streaming and not, and the reply, usage and price read back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm.runtime.models import check_model_spec, load_model
from swarm.runtime.models.base import ModelRequest
from tests.support.fake_clouds import ACCESS_TOKEN, FakeClouds

BEDROCK_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_ID = "claude-sonnet-4-5@20250929"
# Importing the anthropic SDK (and botocore) takes a teammate seconds on a loaded 2-core machine.
SDK_START_S = 60.0
TOOLS = [{"name": "Bash", "description": "Run a command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


@pytest.fixture
def clouds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeClouds]:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws or gcloud files of this machine
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeClouds() as server:
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_VERTEX_BASE_URL", server.base_url + "/v1")
        yield server


def request(**kw: Any) -> ModelRequest:
    return ModelRequest("You are w1.", [{"role": "user", "content": [
        {"type": "text", "text": "list files"}]}], TOOLS, **kw)


@pytest.mark.parametrize("streamed", [False, True])
def test_bedrock_signs_with_aws_keys(clouds: FakeClouds, monkeypatch: pytest.MonkeyPatch,
                                     streamed: bool) -> None:
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSWARMTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    spec = check_model_spec(f"bedrock:{BEDROCK_ID}")
    clouds.push_tool_use("Bash", {"command": "ls"}, text="Listing.",
                         usage={"input_tokens": 1000, "output_tokens": 100})
    pieces: list[str] = []
    reply = load_model(spec).complete(request(on_text=pieces.append if streamed else None))

    (sent,) = clouds.requests
    kind = "invoke-with-response-stream" if streamed else "invoke"
    assert sent.path == f"/model/{BEDROCK_ID}/{kind}"
    auth = sent.headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDSWARMTEST/")
    assert "/us-east-1/bedrock/aws4_request" in auth
    assert sent.body["anthropic_version"] and "model" not in sent.body  # the id is in the path
    assert sent.body["system"][0]["cache_control"] == {"type": "ephemeral"}  # caching stays
    assert [t["name"] for t in sent.body["tools"]] == ["Bash"]
    assert reply.text() == "Listing." and reply.tool_uses()[0]["input"] == {"command": "ls"}
    assert "".join(pieces) == ("Listing." if streamed else "")
    # Priced as Claude Sonnet ($3 in, $15 out per Mtok), wherever it runs.
    assert reply.usage.cost_usd == pytest.approx((1000 * 3 + 100 * 15) / 1e6)


def test_bedrock_with_an_api_key(clouds: FakeClouds, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    clouds.push_text("hello from bedrock")
    model = load_model(check_model_spec(f"bedrock:{BEDROCK_ID}"))
    assert model.complete(request()).text() == "hello from bedrock"
    assert clouds.requests[0].headers["authorization"] == "Bearer bedrock-api-key"


@pytest.mark.parametrize("streamed", [False, True])
def test_vertex_with_a_service_account(clouds: FakeClouds, monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path, streamed: bool) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(clouds.service_account_file(tmp_path)))
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "my-project")
    clouds.push_text("hello from vertex", usage={"input_tokens": 10, "output_tokens": 5})
    pieces: list[str] = []
    reply = load_model(check_model_spec(f"vertex:{VERTEX_ID}")).complete(
        request(on_text=pieces.append if streamed else None))

    (sent,) = clouds.requests
    kind = "streamRawPredict" if streamed else "rawPredict"
    assert sent.path == (f"/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"
                         f"{VERTEX_ID}:{kind}")
    assert sent.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert clouds.tokens_minted == 1
    assert sent.body["anthropic_version"] and "model" not in sent.body
    assert reply.text() == "hello from vertex" and "".join(pieces) == (
        "hello from vertex" if streamed else "")
    assert reply.usage.output_tokens == 5


