"""The user's lasting defaults: `$SWARM_HOME/config.toml`.

```toml
model = "sonnet"                 # default model of new agents ($SWARM_MODEL wins)
backend = "hidden"               # default pane backend ($SWARM_BACKEND wins)
permission_mode = "acceptEdits"  # default mode of `swarm spawn` and `swarm lead`
policy_dir = "/etc/swarm"        # managed agent definitions, agents/*.md ($SWARM_POLICY_DIR wins)
tmux_layout = "window"           # tmux: each teammate its own window ($SWARM_TMUX_LAYOUT wins)
effort = "medium"                # default effort of new agents: low, medium, high or max

[permissions]                    # rules every agent of this user has, on every team
allow = ["Bash(git status:*)", "Bash(make test:*)"]
deny = ["Bash(rm:*)"]
ask = ["Bash(git push:*)"]       # a person decides these, in every mode
reviewer = "command:/home/me/bin/review"  # auto's reviewer when spawn and lead name none
```

Tables other modules own are kept as parsed for them (core.kinds: ACP agents' tables).

Precedence: a command's flag, then the environment variable, then this file, then swarm's
built-in default. It is user configuration (like `$SWARM_HOME/agents/`), so it is trusted; a
project's checkout cannot bring one. Read at call time, parsed again only when the file changed;
`tomllib` loads only when the file exists, so commands without one pay a `stat`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from swarm.errors import BadInputError

FILE_NAME = "config.toml"
TOP_KEYS = ("model", "backend", "permission_mode", "policy_dir", "tmux_layout", "effort")
RULE_KEYS = ("allow", "deny", "ask")
# Top-level tables another module owns and checks (it adds its key at import).
OWNED_TABLES: set[str] = set()


class UserConfig(Struct, frozen=True):
    path: Path
    exists: bool = False
    model: str = ""
    backend: str = ""
    permission_mode: str = ""
    policy_dir: str = ""  # managed agent definitions (settings.policy_dir)
    tmux_layout: str = ""  # split or window (settings.tmux_layout)
    effort: str = ""  # how hard new agents think (settings.effort)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    # Tables other modules read (OWNED_TABLES: core.kinds' agent tables), as parsed.
    tables: tuple[tuple[str, Any], ...] = ()
    ask: tuple[str, ...] = ()
    reviewer: str = ""  # [permissions] reviewer: auto's (runtime.permissions.reviewer)
    warnings: tuple[str, ...] = ()  # unknown keys: named, never fatal


_cache: dict[Path, tuple[tuple[int, int], UserConfig]] = {}


def config_path(home: Path) -> Path:
    return home / FILE_NAME


def load(home: Path) -> UserConfig:
    """The config file under `home`, or an empty config when there is none. A file that does
    not parse, or a key of the wrong type, is a BadInputError naming the file and the key."""
    path = config_path(home)
    try:
        stat = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # no file, or no SWARM_HOME to hold one
        return UserConfig(path)
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror}") from None
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    config = _parse(path)
    _cache[path] = (stamp, config)
    return config


def _parse(path: Path) -> UserConfig:
    import tomllib  # only when there is a file to read

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path} is not valid TOML ({exc}): fix it or remove it") from None
    except OSError as exc:
        raise BadInputError(f"cannot read {path}: {exc.strerror}") from None
    warnings: list[str] = []
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in TOP_KEYS:
            values[key] = _text(path, key, value)
        elif key == "permissions" and isinstance(value, dict):
            for name, rules in value.items():
                if name in RULE_KEYS:
                    values[name] = _rules(path, f"permissions.{name}", rules)
                elif name == "reviewer":
                    values[name] = _text(path, "permissions.reviewer", rules)
                else:
                    warnings.append(f"{path}: unknown key permissions.{name} (ignored)")
        elif key == "permissions":
            raise BadInputError(f"{path}: [permissions] must be a table with allow and deny lists")
        elif key in OWNED_TABLES and isinstance(value, dict):
            values.setdefault("tables", ())
            values["tables"] += ((key, value),)
        else:
            warnings.append(f"{path}: unknown key {key} (ignored)")
    return UserConfig(path, exists=True, warnings=tuple(warnings), **values)


def _text(path: Path, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadInputError(f"{path}: {key} must be a non-empty string, got {value!r}")
    return value.strip()


def _rules(path: Path, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise BadInputError(f"{path}: {key} must be a list of rule strings, got {value!r}")
    return tuple(v.strip() for v in value)

