"""Installing gitive into a repository: harness hooks and MCP configuration as owned entries in the
harnesses' own files (one module per harness), gitive's git hooks, and the record that lets
``gitive uninstall`` undo exactly what was added. See ``docs/install.md``."""
