"""Permissions: the policy checked before every tool call (policy) and asking the lead (asking)."""
