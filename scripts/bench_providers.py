#!/usr/bin/env python3
"""Provider benchmark: what swarm adds to one model call, per provider, and a
teammate's memory on each provider.

Every provider runs against a local fake (tests/support/fake_anthropic.py, fake_openai.py,
fake_clouds.py; real SDKs, real HTTP, no network):
- overhead: swarm's own work around one model call: building the request from the
  Anthropic-shaped conversation (`build_params`: cache breakpoints, or the Chat Completions
  mapping) plus reading the SDK's reply back (`reply_from_message` / `parse_completion`: blocks,
  usage, price). The request is a teammate's: its real system prompt size, its 14 tools and a
  40-message conversation with tool calls and results (~60 KB of JSON). Median of 200 each.
  Context: the whole `complete()` round trip against the fake (median of 20, streamed), of
  which the SDK's and the fake server's work is the rest.
- RSS: one real `swarm agent` teammate per provider (hidden backend), idle after one call; the
  offline `shell` model as the baseline.

Run: .venv/bin/python scripts/bench_providers.py   (about a minute; more on a loaded machine)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(tempfile.mkdtemp(prefix="swarm-bench-providers-"))
os.environ.update(SWARM_HOME=str(HOME / "swarm-home"), HOME=str(HOME),
                  NO_PROXY="127.0.0.1,localhost", ANTHROPIC_API_KEY="bench-key",
                  OPENAI_API_KEY="bench-key", AWS_REGION="us-east-1",
                  AWS_BEARER_TOKEN_BEDROCK="bench-key", CLOUD_ML_REGION="us-east5",
                  ANTHROPIC_VERTEX_PROJECT_ID="bench-project", SWARM_API_RETRY_BASE="0.01")
for var in ("SWARM_MODEL", "SWARM_BACKEND", "SWARM_DEBUG", "TMUX", "SWARM_TEAM",
            "ANTHROPIC_AUTH_TOKEN", "OPENAI_BASE_URL", "OLLAMA_HOST"):
    os.environ.pop(var, None)
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from swarm.backends.hidden import HiddenBackend  # noqa: E402
from swarm.core.team.state import read_state  # noqa: E402
from swarm.core.team.team import Team  # noqa: E402
from swarm.ops.member.spawner import SpawnRequest, spawn  # noqa: E402
from swarm.runtime.models import anthropic_model as am  # noqa: E402
from swarm.runtime.models import load_model  # noqa: E402
from swarm.runtime.models import openai_model as om  # noqa: E402
from swarm.runtime.models.base import ModelRequest  # noqa: E402
from swarm.runtime.tools.registry import all_tools  # noqa: E402
from tests.support.fake_anthropic import FakeAnthropic  # noqa: E402
from tests.support.fake_clouds import FakeClouds  # noqa: E402
from tests.support.fake_openai import FakeOpenAI  # noqa: E402

SAMPLES = 200
CALLS = 20
MB = 1024 * 1024
SPECS = {"anthropic": "sonnet", "openai": "openai:gpt-5-mini", "ollama": "ollama:qwen3-coder",
         "bedrock": "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
         "vertex": "vertex:claude-sonnet-4-5@20250929"}


def teammate_request() -> ModelRequest:
    """A teammate's request mid-task: ~8 KB system prompt, 14 tools, 20 tool round trips."""
    tools = [t.spec() for t in all_tools().values() if t.name != "ExitPlanMode"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "text", "text": "<teammate-message from=\"team-lead\">Fix the parser.</teammate-message>"}]}]
    for n in range(20):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {n}: looking at the next file."},
            {"type": "tool_use", "id": f"toolu_{n:04d}", "name": "Bash",
             "input": {"command": f"sed -n 1,80p src/module_{n}.py"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n:04d}",
             "content": "\n".join(f"line {i}: some code here = {i}" for i in range(80))}]})
    return ModelRequest("You are a teammate. " * 400, messages, tools)


def median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def overhead(provider: str, model: Any, request: ModelRequest, fake: Any) -> dict[str, float]:
    """build + parse medians (ms) and the streamed round trip's median (ms)."""
    if provider in ("openai", "ollama"):
        build = median_ms(lambda: om.build_params(model.name, request, provider), SAMPLES)
        params = om.build_params(model.name, request, provider)
        raw = model._client.chat.completions.create(**params)
        parse = median_ms(lambda: model.parse_completion(raw), SAMPLES)
    else:
        build = median_ms(lambda: am.build_params(model.name, request), SAMPLES)
        raw = model._client.messages.create(**am.build_params(model.name, request))
        parse = median_ms(lambda: am.reply_from_message(model.name, raw, provider), SAMPLES)
    streamed = ModelRequest(request.system, request.messages, request.tools, on_text=lambda t: None)
    model.complete(streamed)  # warm: connection, token
    trip = median_ms(lambda: model.complete(streamed), CALLS)
    return {"build_ms": build, "parse_ms": parse, "overhead_ms": build + parse, "round_trip_ms": trip}


def teammate_rss(team: Team, name: str, spec: str, fake: Any | None) -> float:
    """RSS (MB) of a real teammate on `spec`, idle after one model call."""
    if fake is not None:
        fake.push_text("ok")
    backend = HiddenBackend(team.name)
    result = spawn(team, SpawnRequest(name, prompt="Say ok.", model=spec, backend="hidden",
                                      permission_mode="bypassPermissions", cwd=str(HOME)),
                   pane_backend=backend)
    deadline = time.monotonic() + 180
    try:
        while True:
            state = read_state(team.name, name)
            if state is not None and state.state == "idle" and state.turns >= 1:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{name} on {spec} never went idle")
            time.sleep(0.1)
        time.sleep(1.0)  # settle: the idle note and heartbeat written
        return float(psutil.Process(result.pid).memory_info().rss) / MB
    finally:
        for proc in backend.processes.values():
            proc.terminate()
            proc.wait(10)


def main() -> int:
    request = teammate_request()
    size = len(json.dumps({"system": request.system, "tools": request.tools,
                           "messages": request.messages}))
    anthropic, openai_api, ollama, clouds = FakeAnthropic(), FakeOpenAI(), FakeOpenAI(), FakeClouds()
    os.environ.update(ANTHROPIC_BASE_URL=anthropic.base_url, OPENAI_BASE_URL=openai_api.api_url,
                      OLLAMA_HOST=ollama.base_url, ANTHROPIC_BEDROCK_BASE_URL=clouds.base_url,
                      ANTHROPIC_VERTEX_BASE_URL=clouds.base_url + "/v1",
                      GOOGLE_APPLICATION_CREDENTIALS=str(clouds.service_account_file(HOME)))
    fakes = {"anthropic": anthropic, "openai": openai_api, "ollama": ollama, "bedrock": clouds,
             "vertex": clouds}
    rows: dict[str, dict[str, float]] = {}
    try:
        for provider, spec in SPECS.items():
            rows[provider] = overhead(provider, load_model(spec), request, fakes[provider])
        team = Team.create("bench")
        rows["shell"] = {"rss_mb": teammate_rss(team, "w-shell", "shell", None)}
        for provider, spec in SPECS.items():
            rows[provider]["rss_mb"] = teammate_rss(team, f"w-{provider}", spec, fakes[provider])
    finally:
        for fake in (anthropic, openai_api, ollama, clouds):
            fake.close()
        shutil.rmtree(HOME, ignore_errors=True)

    print(f"request: {size:,} B of JSON (system, {len(request.tools)} tools,"
          f" {len(request.messages)} messages); load average {os.getloadavg()[0]:.1f}")
    print(f"{'provider':<10} {'build ms':>9} {'parse ms':>9} {'overhead':>9} {'round trip':>11}"
          f" {'teammate RSS':>13}")
    for provider, row in rows.items():
        if provider == "shell":
            continue
        print(f"{provider:<10} {row['build_ms']:>9.3f} {row['parse_ms']:>9.3f}"
              f" {row['overhead_ms']:>9.3f} {row['round_trip_ms']:>9.1f}ms {row['rss_mb']:>10.1f} MB")
    print(f"{'shell':<10} {'':>9} {'':>9} {'':>9} {'':>11} {rows['shell']['rss_mb']:>10.1f} MB")
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
