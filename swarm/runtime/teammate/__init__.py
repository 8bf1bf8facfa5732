"""The teammate process: its entry point, the Agent (or a CLI teammate), inputs, idle notes, prompt, life and console."""
