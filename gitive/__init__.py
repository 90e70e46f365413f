"""gitive: a team's coding agents share signed memory, presence and obligations through git."""

__version__ = "0.1.0"
