"""The ssh backend: `ssh:` specs, the command lines it builds (nothing reaches a remote shell
unquoted), the file store refused, and its transport against a real sshd on loopback
(tests/support/sshd_fixtures.py). Teams running across "hosts" with Redis: test_ssh_teams.py."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from swarm.backends import ssh_scripts
from swarm.backends.base import PaneBackend
from swarm.backends.resolve import get_backend, resolve
from swarm.backends.ssh import (
    SshTarget,
    agent_script,
    parse_target,
    remote_env,
    ssh_argv,
)
from swarm.core.team.team import Team
from swarm.errors import BadInputError
from tests.support.agent_fixtures import error_lines, run_swarm

# Values a shell would act on if any reached it unquoted.
NASTY = ["$(touch {canary})", "`touch {canary}`", "'; touch {canary}; '", '"; touch {canary} #',
         "a\nb; touch {canary}", "x && touch {canary}", "-oProxyCommand=touch {canary}", "*", ""]


# -- specs -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "target"), [
    ("ssh:hostb", SshTarget("hostb")),
    ("ssh:build@hostB", SshTarget("hostB", "build")),
    ("ssh:build@host-b.example.com:2222", SshTarget("host-b.example.com", "build", 2222)),
    ("ssh:10.0.0.7:22", SshTarget("10.0.0.7", None, 22)),
    ("ssh:me@[::1]:2200", SshTarget("[::1]", "me", 2200)),
    ("hostb", SshTarget("hostb")),
])
def test_ssh_specs_parse(spec: str, target: SshTarget) -> None:
    assert parse_target(spec) == target
    assert parse_target(f"ssh:{target}") == target  # str() gives the spec back


@pytest.mark.parametrize(("spec", "says"), [
    ("ssh", "needs a host"), ("ssh:", "needs a host"), ("ssh:@host", "bad ssh target"),
    ("ssh:-oProxyCommand=x", "no leading '-'"), ("ssh:host:0", "not 1-65535"),
    ("ssh:host:65536", "not 1-65535"), ("ssh:host:", "bad ssh target"),
    ("ssh:a b", "bad ssh target"), ("ssh:host;rm", "bad ssh target"),
    ("ssh:$(x)", "bad ssh target"), ("ssh:u@h@h", "bad ssh target"), ("ssh:host:22x", "bad ssh"),
])
def test_bad_ssh_specs_are_clear_errors(spec: str, says: str) -> None:
    with pytest.raises(BadInputError, match=r"ssh") as caught:
        parse_target(spec)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_spec_through_resolve_and_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_STORE", "redis://127.0.0.1:1/0")  # resolve never connects
    with pytest.raises(BadInputError, match="bad ssh target"):
        resolve("ssh:bad host")
    monkeypatch.setenv("SWARM_BACKEND", "ssh")
    with pytest.raises(BadInputError, match="needs a host"):
        resolve(None)
    monkeypatch.delenv("SWARM_BACKEND")
    monkeypatch.delenv("SWARM_STORE")  # the spec is checked before the store is
    Team.create("alpha")
    proc = run_swarm("spawn", "w", "--team", "alpha", "--backend", "ssh:-x", "--model", "shell")
    assert proc.returncode == 2
    assert error_lines(proc) == [error_lines(proc)[0]]
    assert "bad ssh target" in proc.stderr


# -- the file store is refused ----------------------------------------------------------------
@pytest.mark.parametrize("store", [None, "file"])
def test_ssh_backend_with_the_file_store_is_refused(store: str | None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    Team.create("alpha")
    env = {"SWARM_STORE": store} if store else {}
    monkeypatch.delenv("SWARM_STORE", raising=False)
    proc = run_swarm("spawn", "w", "--team", "alpha", "--backend", "ssh:build@hostb",
                     "--model", "shell", env=env)
    assert proc.returncode == 2, proc.stderr
    (line,) = error_lines(proc)
    assert "ssh backend needs a network store" in line and "SWARM_STORE=redis://" in line
    assert Team.open("alpha").config().member("w") is None  # nothing registered
    via_env = run_swarm("spawn", "w", "--team", "alpha", "--model", "shell",
                        env={**env, "SWARM_BACKEND": "ssh:hostb"})
    assert via_env.returncode == 2 and "network store" in via_env.stderr


# -- the command lines built ------------------------------------------------------------------
def test_ssh_argv_quotes_every_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canary = tmp_path / "canary"
    monkeypatch.setenv("SWARM_SSH_OPTIONS", "-F '/x y/cfg' -i key")
    args = [v.format(canary=canary) for v in NASTY]
    argv = ssh_argv(parse_target("ssh:build@hostb:2200"), ssh_scripts.LOGS, *args)
    assert argv[:6] == ["ssh", "-p", "2200", "-F", "/x y/cfg", "-i"]
    assert argv[-3:-1] == ["--", "build@hostb"]  # `--`: the destination is never an option
    remote = argv[-1]
    # The remote login shell splits it into exactly: exec sh -c SCRIPT swarm-ssh ARGS.
    assert shlex.split(remote) == ["exec", "sh", "-c", ssh_scripts.LOGS, "swarm-ssh", *args]
    # And a real shell given it passes every argument through untouched, running nothing.
    shown = remote.replace(shlex.quote(ssh_scripts.LOGS),
                           shlex.quote('printf "%s\\0" "$@"'), 1)
    out = subprocess.run(["sh", "-c", shown], capture_output=True, timeout=10, check=True)
    assert out.stdout.decode().split("\0")[:-1] == args
    assert not canary.exists()


def test_bad_ssh_options_are_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_SSH_OPTIONS", "-i 'unclosed")
    with pytest.raises(BadInputError, match="SWARM_SSH_OPTIONS does not parse"):
        ssh_argv(parse_target("hostb"), ssh_scripts.ALIVE)


def test_agent_script_delivers_env_and_argv_exactly(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The script a remote pane runs: names and values arrive byte for byte, no shell acts on
    them, and the script file removes itself."""
    canary = tmp_path / "canary"
    values = {f"SWARM_X{i}": v.format(canary=canary) for i, v in enumerate(NASTY)}
    values["ANTHROPIC_API_KEY"] = "sk-'$(touch " + str(canary) + ")'"
    values["BAD NAME"] = "dropped"
    dump = "import json, os, sys; print(json.dumps([sys.argv[1:], dict(os.environ)]))"
    argv = [sys.executable, "-c", dump, "agent", "--agent-id", "w@alpha", *NASTY]
    script = tmp_path / "agent.sh"
    script.write_text(agent_script(argv, values))
    out = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "sh", str(script)],
                         capture_output=True, text=True, timeout=30, check=True)
    got_argv, got_env = json.loads(out.stdout)
    assert got_argv == ["agent", "--agent-id", "w@alpha", *NASTY]
    assert {k: got_env[k] for k in values if k != "BAD NAME"} == {
        k: v for k, v in values.items() if k != "BAD NAME"}
    assert "BAD NAME" not in got_env
    assert not script.exists() and not canary.exists()


def test_remote_env_leaves_this_hosts_paths_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PATH": "/here/bin", "HOME": "/home/me", "VIRTUAL_ENV": "/v", "SWARM_HOME": "/h",
           "SWARM_STORE": "redis://a:1/0", "SWARM_TEAM": "alpha", "ANTHROPIC_API_KEY": "k",
           "SWARM_SSH_OPTIONS": "-i key", "LANG": "C.UTF-8", "TMUX": "/tmp/x,1,0"}
    monkeypatch.delenv("SWARM_REMOTE_HOME", raising=False)
    assert remote_env(env) == {"SWARM_STORE": "redis://a:1/0", "SWARM_TEAM": "alpha",
                               "ANTHROPIC_API_KEY": "k", "LANG": "C.UTF-8"}
    monkeypatch.setenv("SWARM_REMOTE_HOME", "/srv/swarm")
    assert remote_env(env)["SWARM_HOME"] == "/srv/swarm"


def test_get_backend_ssh_needs_a_host() -> None:
    with pytest.raises(BadInputError, match="needs a host"):
        get_backend("ssh", team="alpha")
    backend = get_backend("ssh", team="alpha", host="build@hostb:2200")
    assert isinstance(backend, PaneBackend) and backend.type == "ssh"
    assert backend.target == SshTarget("hostb", "build", 2200)  # type: ignore[attr-defined]


