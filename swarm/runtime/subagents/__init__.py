"""Subagents: one run in a thread of its parent (subagent), the runner behind the Agent tools, their tools, and worktree isolation."""
