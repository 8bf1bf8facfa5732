"""`swarm doctor`: what it checks (the store, providers, agent CLIs, MCP servers), what it finds and what --fix repairs."""
