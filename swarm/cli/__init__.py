"""The `swarm` command line: one small module per command group, loaded only when used."""
