"""An agent's tools: the Tool base and the file and shell tools (builtin), the team tools
(team), tool inputs as pydantic models (schema), and the registry of every tool (registry)."""
