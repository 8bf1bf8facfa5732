"""The environment each kind of child process gets (docs/design/trust.md).

- Hooks and stdio MCP servers: a minimal environment (`MINIMAL_VARS`, `LC_*`, `PWD` set to their
  cwd, the agent's `SWARM_*` ids) plus what their own entry's `env` object names, with `${VAR}`
  and `${VAR:-default}` expanded from the agent's environment. A project's hook never sees the
  agent's API key unless the entry asks for it by name.
- Bash tool commands: the agent's environment minus every variable that holds a secret, by name
  (every provider's credentials, `SWARM_SECRET_VARS`) or by value (a URL's password or key, the
  store URL's password, a header line): core.trust.secrets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from swarm import settings
from swarm.core.trust.secrets import without_secrets

MINIMAL_VARS = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR")
MINIMAL_PREFIXES = ("LC_",)
ID_VARS = ("SWARM_HOME", "SWARM_TEAM", "SWARM_AGENT_ID")  # who is running it, where its files are
VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def minimal_env(environ: Mapping[str, str], cwd: str | None = None,
                ids: Mapping[str, str] | None = None) -> dict[str, str]:
    """The base environment of a hook or an MCP server: nothing secret by default."""
    env = {k: v for k, v in environ.items()
           if k in MINIMAL_VARS or k in ID_VARS or k.startswith(MINIMAL_PREFIXES)}
    env.update({k: v for k, v in (ids or {}).items() if k in ID_VARS})
    if "SWARM_HOME" not in env:
        env["SWARM_HOME"] = str(settings.home())
    if cwd is not None:
        env["PWD"] = cwd
    return env


def command_env(environ: Mapping[str, str]) -> dict[str, str]:
    """A Bash tool command's environment: the agent's, minus every secret (core.trust.secrets)."""
    return without_secrets(environ)


def expand(text: str, environ: Mapping[str, str], missing: list[str] | None = None) -> str:
    """`${VAR}` and `${VAR:-default}` from `environ`; an unset VAR without a default becomes ''
    and is added to `missing` (so the caller can warn, never print its value)."""
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if environ.get(name):
            return environ[name]
        if default is None:
            if missing is not None:
                missing.append(name)
            return ""
        return default

    return VAR_RE.sub(one, text)


def entry_env(entry: Mapping[str, str], environ: Mapping[str, str],
              missing: list[str] | None = None) -> dict[str, str]:
    """An entry's own `env` object, expanded: what it passes through on purpose."""
    return {name: expand(value, environ, missing) for name, value in entry.items()}
