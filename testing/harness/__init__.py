"""The real-harness rig: real Claude Code, Codex and Gemini CLI binaries, pinned and installed from the npm
registry, run against a scripted model API on 127.0.0.1 that records every request (``docs/hooks.md``)."""
