"""The Redis store (SWARM_STORE=redis://...): the same interface on streams, hashes and keys."""
