"""The user's config file (`swarm.config_file`) checked against what swarm knows: its
permission mode and its lasting rules, each error naming the file and the key."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from swarm import config_file, settings
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.shell.rules import validate_rule
from swarm.errors import BadInputError


def default_mode(allowed: Sequence[str] = PERMISSION_MODES) -> str:
    """config.toml's `permission_mode` ('' when it sets none); a value not in `allowed` is an
    error naming the file."""
    config = settings.user_config()
    if config.permission_mode and config.permission_mode not in allowed:
        raise BadInputError(f"{config.path}: permission_mode must be one of "
                            f"{', '.join(allowed)}, got {config.permission_mode!r}")
    return config.permission_mode


def lasting_rules() -> tuple[list[str], list[str]]:
    """(allow, deny): the `[permissions]` rules every agent of this user has."""
    config = settings.user_config()
    return _checked(config.path, "allow", config.allow), _checked(config.path, "deny", config.deny)


def lasting_ask_rules() -> list[str]:
    """The `[permissions] ask` rules: calls a person decides for every agent of this user."""
    config = settings.user_config()
    return _checked(config.path, "ask", config.ask)


def lasting_reviewer() -> str | None:
    """`[permissions] reviewer`: auto's reviewer when the command line names none."""
    return settings.user_config().reviewer or None


def _checked(path: object, key: str, rules: Sequence[str]) -> list[str]:
    checked = []
    for rule in rules:
        try:
            checked.append(validate_rule(rule))
        except BadInputError as exc:
            raise BadInputError(f"{path}: permissions.{key}: {exc}") from None
    return checked


def problems() -> list[str]:
    """What is wrong with the file's mode and rules, for `swarm config show` (an unparsable
    file raises; its model and backend are checked where the models and backends are known)."""
    found: list[str] = []
    for check in (default_mode, lasting_rules):
        try:
            check()
        except BadInputError as exc:
            found.append(str(exc))
    return found


class Setting(Struct, frozen=True):
    key: str
    value: str
    source: str  # where it came from: the variable, the file, or swarm's default


def describe() -> list[Setting]:
    """Each default a command takes when no flag is given, and where it comes from (what
    `swarm config show` prints)."""
    config = settings.user_config()
    in_file = f"{config_file.FILE_NAME}"

    def pick(key: str, variable: str, configured: str, default: str) -> Setting:
        if settings.raw(variable):
            return Setting(key, settings.raw(variable), f"${variable}")
        if configured:
            return Setting(key, configured, in_file)
        return Setting(key, default, "default")

    rows = [
        pick("model", "SWARM_MODEL", config.model, default_model_text()),
        pick("backend", "SWARM_BACKEND", config.backend, "auto"),
        Setting("permission_mode", config.permission_mode or "default",
                in_file if config.permission_mode else "default"),
        pick("policy_dir", "SWARM_POLICY_DIR", config.policy_dir, "(none)"),
        pick("tmux_layout", "SWARM_TMUX_LAYOUT", config.tmux_layout, "split"),
        Setting("effort", config.effort or "(none: each model's own)",
                in_file if config.effort else "default"),
    ]
    rows += [Setting(f"permissions.{key}", rule, in_file)
             for key, rules in (("allow", config.allow), ("deny", config.deny)) for rule in rules]
    return rows


def default_model_text() -> str:
    return "sonnet" if settings.anthropic_credentials() else "shell (no Anthropic credentials)"
