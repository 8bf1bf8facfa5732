"""The private settings an ACP agent starts with (core.kinds `AcpAgent.settings`): a 0600 file
of this start, named to the agent by a variable, never the user's own files. Each makes the
agent ask swarm about every command, edit and read (swarm's mode, rules and file scopes decide;
swarm's own tools excepted), and keeps it quiet: no telemetry, update checks or side requests.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from swarm.runtime.clis.base import DriverSetup

SERVER = "swarm"


def private_file(prefix: str, content: dict[str, Any]) -> Path:
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".json")  # 0600
    with os.fdopen(fd, "w") as out:
        json.dump(content, out, indent=1)
    return Path(name)


def _model(setup: DriverSetup) -> str | None:
    return setup.model or setup.env.get("OPENAI_MODEL") or None


def qwen_settings(setup: DriverSetup, own_mode: str) -> dict[str, str]:
    """Qwen Code's system-tier settings (above the user's and the workspace's)."""
    settings: dict[str, Any] = {
        "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        # The follow-up suggestion is a model request after every turn.
        "ui": {"enableFollowupSuggestions": False},
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
        "tools": {"approvalMode": own_mode},
        # Its default runs reads and some commands unasked: `Read` covers its reads, greps,
        # globs and listings.
        "permissions": {"ask": ["Bash", "exec", "Read", "Edit", "Write", "WebFetch"]},
    }
    if setup.env.get("OPENAI_API_KEY"):
        settings["security"] = {"auth": {"selectedType": "openai"}}
    model = _model(setup)
    if model:
        settings["model"] = {"name": model}
    return {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(private_file("swarm-qwen-", settings))}


def opencode_settings(setup: DriverSetup, own_mode: str) -> dict[str, str]:
    """OpenCode's config (merged over the user's): it asks about every tool but swarm's, and
    reaches its model through swarm's proxy when the credential is one swarm stands in for."""
    config: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False, "share": "disabled",
        "agent": {"title": {"disable": True}},  # a model request per session for a title
        "permission": {"*": "ask", f"{SERVER}_*": "allow"},
    }
    model = _model(setup)
    if setup.model_url and model:
        config["provider"] = {SERVER: {
            "npm": "@ai-sdk/openai-compatible", "name": "swarm's proxy",
            "options": {"baseURL": setup.model_url, "apiKey": "{env:OPENAI_API_KEY}"},
            "models": {model: {"name": model}}}}
        config["model"] = config["small_model"] = f"{SERVER}/{model}"
    return {"OPENCODE_CONFIG": str(private_file("swarm-opencode-", config))}
