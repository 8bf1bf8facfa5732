"""The LLM team lead (`swarm lead`): the lead process, its tools, its wake policy, and the
interactive and headless sessions. Built on the runtime (loop, models, tools, permission
policy) and the ops (spawn, control, health, approvals)."""
