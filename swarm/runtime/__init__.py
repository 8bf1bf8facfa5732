"""The teammate runtime: the agent loop, its tools, its models and its permission checks."""
