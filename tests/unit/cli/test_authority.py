"""`swarm mode` in-process (swarm/cli/authority.py): its argument named, its choices listed."""

from __future__ import annotations



