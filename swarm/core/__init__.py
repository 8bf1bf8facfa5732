"""The data layer: paths, locks and atomic JSON, mailboxes, tasks, the team file, agent state.

Imports nothing above it (checked by import-linter in `make lint`)."""
