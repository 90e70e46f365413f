"""Capture: the local event log, harness hook adapters, git-hook handlers. Hook paths import only stdlib."""
