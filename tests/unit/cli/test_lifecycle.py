"""`swarm wait` and `swarm shutdown` in-process (swarm/cli/lifecycle.py): bad input and nothing to wait for."""

from __future__ import annotations



