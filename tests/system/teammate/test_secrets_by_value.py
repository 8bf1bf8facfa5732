"""Secrets by value as well as by name: a variable whose value holds
credentials (URL userinfo, `key=`/`token=` query parameters, the store URL's password, a header
line) and every provider's credential variables never reach a teammate's Bash, and a failed
model call never prints the credentials of its base URL into state, inbox, status, report or
log. Real teammates (hidden backend), real bash, a real fake API and a real redis-server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.runtime.tools.base import ToolContext
from swarm.runtime.tools.registry import all_tools
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.fake_openai import FakeOpenAI
from tests.support.redis_server import RedisServer, free_port
from tests.unit.core.trust.test_child_env import read_env

# name -> value: every one of these values must stay out of a Bash command's environment.
SECRETS = {
    # provider credentials by name, one or more per provider
    "ANTHROPIC_API_KEY": "sk-ant-secret-01",
    "ANTHROPIC_AUTH_TOKEN": "gateway-token-02",
    "ANTHROPIC_CUSTOM_HEADERS": "X-Gateway-Key: header-secret-03",
    "AWS_BEARER_TOKEN_BEDROCK": "bedrock-bearer-04",
    "AWS_ACCESS_KEY_ID": "AKIAKEYID0005",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-06",
    "AWS_SESSION_TOKEN": "aws-session-07",
    "OPENAI_API_KEY": "sk-openai-secret-08",
    "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/gcp-creds-17.json",
    # credentials by value: in a base URL's userinfo or query, in any variable
    "ANTHROPIC_BASE_URL": "http://user:base-pass-09@127.0.0.1:9/",
    "ANTHROPIC_BEDROCK_BASE_URL": "https://gw.example/bedrock?token=bedrock-query-10",
    "ANTHROPIC_VERTEX_BASE_URL": "https://vx:vertex-pass-11@gw.example/v1",
    "OPENAI_BASE_URL": "http://127.0.0.1:9/v1?key=openai-query-12",
    "OLLAMA_HOST": "http://ol:ollama-pass-13@127.0.0.1:11434",
    "SWARM_WEBHOOK": "https://hooks.example/x?api_key=webhook-key-14",
    "ANTHROPIC_PROXY_DSN": "postgres://u:dsn-pass-15@db.example/x",
}
# ...and these stay: nothing secret in them.
PLAIN = {"SWARM_PLAIN_URL": "http://example.com/x?page=2", "ANTHROPIC_MODEL": "claude-x",
         "AWS_REGION": "us-east-1"}


def secret_values() -> list[str]:
    return list(SECRETS.values())


def leaks(text: str, values: list[str]) -> list[str]:
    return [v for v in values if v in text]


def seed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {**SECRETS, **PLAIN}.items():
        monkeypatch.setenv(name, value)


def test_the_bash_tool_loses_secrets_by_value_and_every_providers_credentials(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead's Bash (in-process): real bash prints its environment."""
    seed(monkeypatch)
    monkeypatch.setenv("SWARM_STORE", "file")
    team = Team.create("envs")
    ctx = ToolContext(team=team, name="team-lead", cwd=tmp_path, env={"SWARM_TEAM": "envs"})
    bash = all_tools()["Bash"]
    result = bash.run(bash.parse({"command": "env"}), ctx)
    assert leaks(result.content, secret_values()) == []
    seen = read_env_text(result.content)
    for name, value in PLAIN.items():
        assert seen[name] == value, name


def read_env_text(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isidentifier():
            out[key] = value
    return out


def test_a_teammates_bash_env_shows_no_secret_value(
        crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(monkeypatch)
    out = tmp_path / "bash-env"
    result = crew.spawn("bob", prompt=f"$ env > {out}")
    crew.wait_idle_notes("bob", 1, timeout=60)
    text = out.read_text()
    assert leaks(text, secret_values()) == []
    seen = read_env(out)
    assert seen["SWARM_PLAIN_URL"] == PLAIN["SWARM_PLAIN_URL"]
    assert seen["SWARM_AGENT_ID"] == f"bob@{crew.team.name}"
    # The agent keeps what it needs (its turn ran), but the environment it was started with, which
    # its commands could read at /proc/PID/environ, shows none of it (it zeroed them; as any
    # user but root it cannot be opened at all: non-dumpable).
    started = starting_environ(result.pid)
    if started is not None:
        assert leaks(started, secret_values()) == []
        assert "ANTHROPIC_BASE_URL=\0" in started and PLAIN["SWARM_PLAIN_URL"] in started


STORE_PASSWORD = "store-pass-16"


@pytest.fixture
def locked_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A redis-server that requires STORE_PASSWORD, selected as the store (SWARM_STORE with
    the password in it). Request it before `crew`, so the crew's team lives there."""
    from tests.support.redis_server import REDIS_SERVER

    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path / "redis", password=STORE_PASSWORD)
    server.start()
    url = f"redis://:{STORE_PASSWORD}@127.0.0.1:{server.port}/0"
    monkeypatch.setenv("SWARM_STORE", url)
    try:
        yield url
    finally:
        server.stop()


def test_a_teammates_bash_does_not_see_the_store_password(
        locked_store: str, crew: Crew, tmp_path: Path) -> None:
    from swarm.core.store import select as stores

    assert stores.team_store().shared  # the crew's team is on the locked Redis
    out = tmp_path / "bash-env"
    result = crew.spawn("bob", prompt=f"$ env > {out}")
    crew.wait_idle_notes("bob", 1, timeout=60)  # it works on the locked store
    assert STORE_PASSWORD not in out.read_text()
    assert "SWARM_STORE" not in read_env(out)  # the teammate's own store: not for its Bash
    started = starting_environ(result.pid)  # the agent used it (above), never shows it
    assert started is None or STORE_PASSWORD not in started


def starting_environ(pid: int) -> str | None:
    """What /proc/PID/environ shows of a process (None: it cannot be opened, not being root)."""
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace")
    except PermissionError:
        return None


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    port = free_port()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    return port


def everything_written(team: str) -> str:
    """Every file swarm wrote for the team (state, inboxes, transcripts, logs)."""
    texts = []
    for path in paths.team_dir(team).rglob("*"):
        if path.is_file():
            texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)


def assert_nowhere(crew: Crew, name: str, hidden: list[str]) -> None:
    state = paths.agent_dir(crew.team.name, name) / "state.json"
    written = {
        "state.json": state.read_text(),
        "inbox": json.dumps([m.text for m in crew.lead_messages()]),
        "status --json": run_swarm("status", "--json").stdout,
        "status": run_swarm("status").stdout,
        "report": run_swarm("report").stdout,
        "report --json": run_swarm("report", "--json").stdout,
        "log": crew.log(name),
        "files": everything_written(crew.team.name),
    }
    found = {where: leaks(text, hidden) for where, text in written.items() if leaks(text, hidden)}
    assert found == {}


def test_a_failed_anthropic_call_never_shows_the_base_urls_credentials(
        crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base URL (userinfo and `?key=`) points at a closed loopback port."""
    port = closed_port()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    monkeypatch.setenv("ANTHROPIC_BASE_URL",
                       f"http://apiuser:url-pass-21@127.0.0.1:{port}/gw?key=url-key-22")
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "0")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    crew.spawn("bob", prompt="hello", model="sonnet")
    notes = crew.wait_idle_notes("bob", 1, timeout=60)
    assert notes[0].failure_reason and "unreachable" in notes[0].failure_reason
    assert f"127.0.0.1:{port}" in notes[0].failure_reason  # where it failed is still said
    assert_nowhere(crew, "bob", ["url-pass-21", "url-key-22"])


def test_a_failed_openai_call_never_shows_the_base_urls_credentials(
        crew: Crew, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that answers 500, one that is not there, and one whose error text echoes the
    request's path (with the query's token in it): none shows the credentials."""
    fake_openai.push_error(500, message="upstream broke", should_retry=False)
    host = fake_openai.api_url.split("://", 1)[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-fake")
    monkeypatch.setenv("SWARM_API_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://u:oai-pass-23@{host}")
    crew.spawn("bob", prompt="hello", model="openai:gpt-4o")
    notes = crew.wait_idle_notes("bob", 1, timeout=60)
    assert notes[0].failure_reason and "500" in notes[0].failure_reason
    port = closed_port()
    monkeypatch.setenv("OPENAI_BASE_URL",
                       f"http://u:oai-pass-23@127.0.0.1:{port}/v1?token=oai-token-24")
    crew.spawn("carl", prompt="hello", model="openai:gpt-4o")
    notes = crew.wait_idle_notes("carl", 1, timeout=60)
    assert notes[0].failure_reason and "unreachable" in notes[0].failure_reason
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://{host}?token=oai-token-24")
    crew.spawn("dave", prompt="hello", model="openai:gpt-4o")
    notes = crew.wait_idle_notes("dave", 1, timeout=60)
    assert notes[0].failure_reason and "no route" in notes[0].failure_reason
    for name in ("bob", "carl", "dave"):
        assert_nowhere(crew, name, ["oai-pass-23", "oai-token-24"])


def test_a_log_line_never_shows_a_secret(tmp_path: Path) -> None:
    """A process's log (agent.log, and stderr under SWARM_DEBUG): message and traceback."""
    import os
    import subprocess
    import sys

    log = tmp_path / "agent.log"
    code = ("import logging, sys; from pathlib import Path; from swarm.log import configure;"
            " configure(Path(sys.argv[1]));"
            " logging.getLogger('swarm.t').warning('calling %s', 'http://u:log-pass-61@h/?key=log-key-62')\n"
            "try:\n raise RuntimeError('header said ' + 'log-header-63')\n"
            "except RuntimeError:\n logging.getLogger('swarm.t').exception('failed')\n")
    env = {**os.environ, "ANTHROPIC_CUSTOM_HEADERS": "X-Api-Key: log-header-63",
           "SWARM_DEBUG": "1"}
    proc = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True,
                          text=True, env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    text = log.read_text() + proc.stderr
    assert "calling http://u:***@h/?key=***" in text and "RuntimeError" in text
    assert leaks(text, ["log-pass-61", "log-key-62", "log-header-63"]) == []


def test_every_provider_names_its_credentials_as_secrets() -> None:
    """A provider added to the table without its credentials in core.secrets fails here."""
    from swarm.core.trust.secrets import PROVIDER_SECRETS, is_secret
    from swarm.runtime.models.providers import PROVIDERS

    assert set(PROVIDER_SECRETS) == set(PROVIDERS)
    for names in PROVIDER_SECRETS.values():
        for name in names:
            assert name in SECRETS, name  # seeded in the tests above
            assert is_secret(name, "x")
