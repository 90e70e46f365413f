"""The local, read-only web dashboard (`gitive ui`): the team, its memory and its health at a glance."""
