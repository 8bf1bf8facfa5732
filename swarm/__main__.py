from swarm.cli.main import run

run()
