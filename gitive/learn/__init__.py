"""Learning from this machine's own sessions: the quiet pass (drafts), their scoring, and skills from verified lessons."""
