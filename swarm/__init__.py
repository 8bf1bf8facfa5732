"""swarm: run teams of LLM agents from a shell."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Team", "__version__"]

# A library: log lines reach no terminal unless the program configures logging (swarm.log).
logging.getLogger("swarm").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from swarm.core.team.team import Team


def __getattr__(name: str) -> Any:
    # Lazy, so `swarm send` does not pay for modules it does not use.
    if name == "Team":
        from swarm.core.team.team import Team

        return Team
    raise AttributeError(name)
