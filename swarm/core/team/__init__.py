"""A running team: the Team object, its lead's key, members' processes, worktrees, scopes, overlaps."""
