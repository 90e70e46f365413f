"""The local SQLite projection of verified entries: deletable, rebuilt from refs alone."""
