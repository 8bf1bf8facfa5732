"""Operations on a team built on the core: spawning, steering, health, approvals, doctor, demo."""
