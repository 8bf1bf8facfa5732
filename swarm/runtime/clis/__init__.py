"""Teammates that are another agent CLI (`spawn --agent claude-code|gemini`): a driver per CLI,
and the teammate process that drives one (`teammate.CliTeammate`)."""
