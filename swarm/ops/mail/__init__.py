"""Mail: every message of a team, live and archived, and read receipts."""
