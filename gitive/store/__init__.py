"""Everything that touches git: objects and refs through pygit2, fetch and push through the git CLI."""
