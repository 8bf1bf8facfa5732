"""The ssh backend: `ssh:` specs and the command lines it builds (nothing reaches a remote shell
unquoted). Its agent script and the file store refused, through real processes:
tests/system/ssh/test_backend_ssh.py; its transport against a real sshd on loopback:
tests/system/ssh/test_ssh_backend.py; teams across "hosts" with Redis: test_ssh_teams.py."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from swarm.backends import ssh_scripts
from swarm.backends.base import PaneBackend
from swarm.backends.resolve import get_backend
from swarm.backends.ssh import (
    SshTarget,
    parse_target,
    remote_env,
    ssh_argv,
)
from swarm.errors import BadInputError

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
