"""Shared by the pane backends: which environment variables may appear on a command line.

A pane backend hands the agent's environment to a terminal (tmux `-e K=V`, an iTerm2 `write text`
line). Those are visible: in `ps` for the tmux client's argv, on screen and in shell history for
iTerm2. Secret-looking variables (a name with KEY, TOKEN, AUTH...) and every variable core.trust.secrets
finds a secret in (by name or by value: a URL's password or key, the store URL, a header line)
therefore travel through a private 0600 temp file that the pane's shell sources and deletes
before it starts the agent.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import tempfile
from collections.abc import Mapping

from swarm.core.trust.secrets import is_secret

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Terminal-owned variables: the terminal sets them for the new pane; copying the spawner's
# values would point the agent at the wrong pane or server.
NEVER_COPY = frozenset({"TMUX", "TMUX_PANE", "ITERM_SESSION_ID", "TERM_SESSION_ID"})


def split_env(env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(plain, secret): secrets are only those whose name a POSIX shell can `export`."""
    plain: dict[str, str] = {}
    secret: dict[str, str] = {}
    for key, value in env.items():
        if key in NEVER_COPY:
            continue
        if (_SECRET.search(key) or is_secret(key, value)) and _SHELL_NAME.match(key):
            secret[key] = value
        else:
            plain[key] = value
    return plain, secret


def secret_names(env: Mapping[str, str]) -> list[str]:
    """The secret-looking variables of `env` (what must never sit in a terminal's environment)."""
    return sorted(split_env(env)[1])


def secrets_prelude(secret: Mapping[str, str]) -> tuple[str, str | None]:
    """Write `secret` to a private file; return (shell prelude that loads and deletes it, path)."""
    if not secret:
        return "", None
    fd, path = tempfile.mkstemp(prefix="swarm-env-", suffix=".sh")  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        for key, value in secret.items():
            handle.write(f"export {key}={shlex.quote(value)}\n")
    quoted = shlex.quote(path)
    return f". {quoted} && rm -f -- {quoted} && ", path


def discard(path: str | None) -> None:
    """Remove a secrets file that no shell will ever source (the pane failed to start)."""
    if path:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
