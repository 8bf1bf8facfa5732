"""An agent's tools: the file and shell tools, the team tools, and the registry of every tool."""
