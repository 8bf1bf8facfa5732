"""`swarm report`: a team read back from its files, its lanes and timeline, and the HTML page."""
