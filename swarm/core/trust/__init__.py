"""Workspace trust and the config files swarm reads: MCP servers, child environments, secrets."""
