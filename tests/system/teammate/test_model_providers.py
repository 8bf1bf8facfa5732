"""Claude on Bedrock and Vertex through the anthropic SDK's own clients, pointed at the local
fakes in tests/support/fake_clouds.py: the request each client builds (path, signature or token, body
with prompt caching), streaming and not, and the reply, usage and price read back.

The tests of tests/unit/runtime/models/test_providers.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import pytest

from tests.support.agent_fixtures import Crew
from tests.support.fake_clouds import FakeClouds
from tests.unit.runtime.models.test_providers import (
    BEDROCK_ID,
    SDK_START_S,
    clouds,  # noqa: F401 - the fixtures
)


def test_a_bedrock_teammate(crew: Crew, clouds: FakeClouds,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The AWS variables reach the teammate's process; the loop never knows the provider."""
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    clouds.push_tool_use("Bash", {"command": "echo on-bedrock"})
    clouds.push_text("Done on Bedrock.")
    crew.spawn("w1", prompt="Run echo.", model=f"bedrock:{BEDROCK_ID}")
    (note,) = crew.wait_idle_notes("w1", 1, timeout=SDK_START_S)
    assert note.summary == "Done on Bedrock."
    bodies = clouds.messages_requests()
    assert len(bodies) == 2 and "on-bedrock" in str(bodies[1]["messages"][-1]["content"])
