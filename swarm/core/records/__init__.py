"""The records the processes share: names, messages, tasks, the team document, agent state."""
