"""What users plug into an agent: their hooks (user_hooks), MCP servers (mcp_client, mcp_guard), and the loader that wires both into an agent."""
