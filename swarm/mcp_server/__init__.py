"""`swarm mcp serve`: the MCP server that serves teammates (agent CLIs) and outside clients: its stdio server, tool host, wait tools and permission prompt."""
