"""Every test gets its own SWARM_HOME and a clean environment: no network, no user data."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_anthropic import fake_api  # noqa: F401  (the fake Anthropic API fixture)


@pytest.fixture(autouse=True)
def swarm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "swarm-home"
    monkeypatch.setenv("SWARM_HOME", str(home))
    for var in ("SWARM_TEAM", "SWARM_AGENT_ID", "SWARM_MODEL", "SWARM_BACKEND",
                "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "TMUX", "TMUX_PANE", "SWARM_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    return home
