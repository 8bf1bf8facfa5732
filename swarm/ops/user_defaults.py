"""`swarm config show`'s checks: each value of config.toml taken as the commands would take it
(its mode and rules by core.trust.user_config, its model and backend here, where the models and
backends are known), each problem naming the file and the key."""

from __future__ import annotations

from msgspec import Struct

from swarm import settings
from swarm.backends.resolve import resolve
from swarm.config_file import UserConfig
from swarm.core.records.names import validate_effort
from swarm.core.trust.user_config import problems
from swarm.errors import BadInputError
from swarm.runtime.models.spec import check_model_spec, parse_model_spec


class Checked(Struct, frozen=True):
    problems: list[str]  # values no command would take: `swarm config show` fails
    warnings: list[str]  # unknown keys, a model that cannot run here (no credentials)


def check_user_config() -> Checked:
    """Every value of the user's config.toml checked (a file that does not parse raises)."""
    user = settings.user_config()
    warnings = list(user.warnings)
    return Checked([*_model_and_backend(user, warnings), *problems()], warnings)


def _model_and_backend(user: UserConfig, warnings: list[str]) -> list[str]:
    """A name that is no model or backend is a problem; a model that cannot run here (its
    provider's credentials are not set in this shell) is a warning."""
    found = []
    if user.model:
        try:
            parse_model_spec(user.model)
        except BadInputError as exc:
            found.append(f"{user.path}: model: {exc}")
        else:
            try:
                check_model_spec(user.model)
            except BadInputError as exc:
                warnings.append(f"{user.path}: model: {exc}")
    if user.effort:
        try:
            validate_effort(user.effort, f"{user.path}: effort")
        except BadInputError as exc:
            found.append(str(exc))
    if user.backend and user.backend != "auto":
        try:
            resolve(user.backend)
        except BadInputError as exc:
            found.append(f"{user.path}: backend: {exc}")
    return found
