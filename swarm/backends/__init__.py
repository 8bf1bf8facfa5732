"""Pane backends: where a teammate process runs (tmux pane, iTerm2 pane, or hidden)."""
