"""The team: roster merge and admission, invites, and the hive a command works in."""
