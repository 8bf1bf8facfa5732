"""A member's life: spawn, respawn and wake, control (interrupt, kill, stop), shutdown, health, waiting, resume."""
