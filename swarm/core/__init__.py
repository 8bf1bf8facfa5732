"""The core: records, the stores, the team, the Bash rules, trust, agent definitions and text.

Imports nothing above it (checked by import-linter in `make lint`)."""
