"""The OS plumbing of an agent process: signals, the subreaper, orphans, a gone team, killing a command's tree."""
