"""The Bash rule engine: a command parsed as bash runs it, what it writes and links, the rules."""
