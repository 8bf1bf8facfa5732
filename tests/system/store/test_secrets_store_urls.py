"""Every form of a Redis store URL keeps its password out of every message: a real redis-server that requires a password,
reached with the wrong one, at a port nobody listens on, over TLS it does not speak, over its
unix socket, with the password in the query or percent-encoded, and URLs that do not parse.
`swarm status`, `swarm status --json`, `swarm doctor` and `swarm doctor --json` say what is
wrong, and never the password."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from swarm.core.trust.secrets import redact_url
from tests.support.cli_runner import run_swarm
from tests.support.redis_server import REDIS_SERVER, RedisServer, free_port

PASSWORD = "right-pw-31"


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path_factory.mktemp("redis"), password=PASSWORD)
    server.start()
    yield server
    server.stop()


def forms(server: RedisServer) -> list[tuple[str, list[str]]]:
    """(URL, the secrets it holds, raw and decoded)."""
    port, closed, sock = server.port, free_port(), server.socket
    return [
        (f"redis://:wrong-pw-32@127.0.0.1:{port}/0", ["wrong-pw-32"]),
        (f"redis://default:wrong-pw-33@127.0.0.1:{port}/0", ["wrong-pw-33"]),
        (f"redis://someone:wrong-pw-34@127.0.0.1:{closed}/0", ["wrong-pw-34"]),
        (f"rediss://:wrong-pw-35@127.0.0.1:{port}/0", ["wrong-pw-35"]),
        (f"unix://:wrong-pw-36@{sock}?db=0", ["wrong-pw-36"]),
        (f"unix://:wrong-pw-37@{sock}.gone", ["wrong-pw-37"]),
        (f"redis://127.0.0.1:{port}/0?password=wrong-pw-38", ["wrong-pw-38"]),
        (f"redis://127.0.0.1:{closed}/0?password=wrong-pw-39&db=0", ["wrong-pw-39"]),
        (f"redis://:wr%40ng%3Apw-40@127.0.0.1:{port}/0", ["wr%40ng%3Apw-40", "wr@ng:pw-40"]),
        ("redis://:wrong-pw-41@127.0.0.1:notaport/0", ["wrong-pw-41"]),
        (f"redis:/:wrong-pw-42@127.0.0.1:{port}/0", ["wrong-pw-42"]),
        (f"http://:wrong-pw-43@127.0.0.1:{port}/0", ["wrong-pw-43"]),
        (f"redis://:{PASSWORD}@127.0.0.1:{port}/0", [PASSWORD]),  # the right one: works
        (f"unix://:{PASSWORD}@{sock}", [PASSWORD]),
    ]


COMMANDS = (("status",), ("status", "--json"), ("doctor",), ("doctor", "--json"))


def _said(url: str, args: tuple[str, ...]) -> str:
    env = {"SWARM_STORE": url, "SWARM_TEAM": "t"}  # a team: `status` reads the store
    proc = run_swarm(*args, env=env, timeout=60)
    assert "Traceback" not in proc.stderr, (url, args, proc.stderr)
    return proc.stdout + ("\0" if args[-1] == "--json" else "") + proc.stderr


def test_no_store_url_form_shows_its_password(locked: RedisServer) -> None:
    cases = forms(locked)
    runs = [(url, args) for url, _ in cases for args in COMMANDS]
    # Eight at a time: a `rediss://` to a plain server waits out the socket timeout in every
    # command (redis-py bounds the TLS handshake by it, not by the connect timeout).
    with ThreadPoolExecutor(8) as pool:
        outputs = list(pool.map(lambda run: _said(*run), runs))
    found = {}
    for index, (url, secrets) in enumerate(cases):
        said = outputs[index * len(COMMANDS):(index + 1) * len(COMMANDS)]
        text = "\n".join(said)
        if PASSWORD in secrets:  # the right password: the store answers
            doctor_json = said[-1].split("\0")[0]
            assert json.loads(doctor_json)["store"]["ok"] is True, doctor_json
        else:  # what is wrong is said in one line, naming the store
            assert "store" in said[0].lower(), (url, said[0])
        leaked = [s for s in secrets if s in text]
        if leaked:
            found[url] = leaked
    assert found == {}


def test_redact_url_keeps_where_and_drops_every_password() -> None:
    for url, secret, kept in [
        ("redis://:pw-51@h:6379/0", "pw-51", "h:6379"),
        ("redis://user:pw-52@h/0", "pw-52", "user"),
        ("rediss://:pw-53@h:6380", "pw-53", "rediss://"),
        ("unix://:pw-54@/run/redis.sock", "pw-54", "/run/redis.sock"),
        ("redis://h/0?password=pw-55&db=1", "pw-55", "db=1"),
        ("redis://:p%40w-56@h", "p%40w-56", "h"),
        ("redis://:pw-57@h:notaport/0", "pw-57", "redis://"),
        ("redis://:pw-58@[::1]:6379", "pw-58", "[::1]:6379"),
    ]:
        shown = redact_url(url)
        assert secret not in shown and kept in shown, (url, shown)


def test_what_is_a_secret_by_value_and_what_is_not() -> None:
    from swarm.core.trust.secrets import is_secret, redact

    for name, value in [("A", "https://u:pw@h/x"), ("B", "https://h/x?X-Amz-Signature=abc"),
                        ("C", "https://h/x?page=1&access_token=t"), ("D", "Authorization: Bearer t"),
                        ("E", "Referer: https://h/x\nx-api-key: k"), ("OPENAI_ORG_KEY", "plain"),
                        ("AWS_BEARER_TOKEN_BEDROCK", "t")]:
        assert is_secret(name, value), (name, value)
    for name, value in [("PATH", "/usr/bin:/bin"), ("DBUS", "unix:path=/run/user/1/bus"),
                        ("U", "http://host:8080/x?page=2&design=3"), ("G", "ssh://git@github.com/r"),
                        ("LS_COLORS", "rs=0:di=01;34:ln=01;36"), ("ANTHROPIC_MODEL", "opus"),
                        ("SSH_AUTH_SOCK", "/tmp/agent.1")]:
        assert not is_secret(name, value), (name, value)
    env = {"SWARM_STORE": "redis://:p%40ss-word@h/0", "OTHER": "fine"}
    said = "AUTH failed for p@ss-word and p%40ss-word at redis://:p%40ss-word@h/0 (fine)"
    assert redact(said, env) == "AUTH failed for *** and *** at redis://:***@h/0 (fine)"
