"""Agent definitions: their files and fields, the built-ins, skills and an agent's own memory."""
