"""What `swarm doctor` says of each model provider (`[PROVIDER:]MODEL`, runtime/models/spec.py):
each listed without values, a broken prices file reported, Ollama asked only when something
listens (the parser and the check in-process: tests/unit/runtime/models/test_spec.py)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from swarm.ops.doctor.diagnose import diagnose, render
from swarm.runtime.models import check_model_spec


def test_doctor_calls_ollama_ready_only_when_something_listens(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as closed:  # a port nothing listens on once this is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    row = {r["provider"]: r for r in diagnose()["providers"]}["ollama"]
    assert row["ready"] is False
    assert row["problem"] == (f"nothing answers at http://127.0.0.1:{port} (start `ollama serve`,"
                              " or set OLLAMA_HOST)")
    assert f"--  provider ollama: nothing answers at http://127.0.0.1:{port}" in render(diagnose())
    assert check_model_spec("ollama:qwen3-coder") == "ollama:qwen3-coder"  # spawn stays cheap
    with socket.create_server(("127.0.0.1", 0)) as listening:
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{listening.getsockname()[1]}/")
        row = {r["provider"]: r for r in diagnose()["providers"]}["ollama"]
        assert row["ready"] is True and row["problem"] is None


def test_doctor_lists_each_provider_without_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:pw@llm.internal/v1?key=zzz")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gateway.example")
    listening = socket.create_server(("127.0.0.1", 0))  # Ollama's port answers
    port = listening.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    with listening:
        report = diagnose()
    rows = {r["provider"]: r for r in report["providers"]}
    assert list(rows) == ["anthropic", "bedrock", "vertex", "openai", "ollama"]
    assert rows["openai"] == {"provider": "openai", "ready": True, "credentials": "OPENAI_API_KEY",
                              "problem": None, "endpoint": "https://llm.internal/v1"}
    assert rows["anthropic"]["ready"] is False
    assert rows["anthropic"]["endpoint"] == "https://gateway.example"
    assert rows["ollama"]["ready"] is True
    assert rows["ollama"]["endpoint"] == f"http://127.0.0.1:{port}/v1"
    text = render(report)
    assert "ok  provider openai: ready (OPENAI_API_KEY); endpoint https://llm.internal/v1" in text
    assert ("--  provider anthropic: anthropic needs credentials: set ANTHROPIC_API_KEY (or"
            " ANTHROPIC_AUTH_TOKEN for a gateway); endpoint https://gateway.example") in text
    assert "sk-secret-value" not in json.dumps(report) + text and "pw@" not in text


def test_doctor_reports_a_broken_prices_file(swarm_home: Path) -> None:
    swarm_home.mkdir(parents=True, exist_ok=True)
    (swarm_home / "prices.json").write_text("[1, 2]")
    text = render(diagnose())
    assert "!!  prices: " in text and "must be a JSON object" in text
    (swarm_home / "prices.json").write_text('{"my-model": [1, 2]}')
    assert f"ok  prices: {swarm_home / 'prices.json'} adds 1 model(s)" in render(diagnose())
