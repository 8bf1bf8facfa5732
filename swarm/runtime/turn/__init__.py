"""One turn of any agent (teammate, lead, subagent): the loop, its hooks, the builder, compaction and budgets."""
