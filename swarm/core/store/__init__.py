"""Where a team's data lives: paths, locks and atomic JSON, the store interface and its selection."""
