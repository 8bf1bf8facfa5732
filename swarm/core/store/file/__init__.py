"""The file store (the default): mailboxes, tasks, team document and state under $SWARM_HOME/teams."""
