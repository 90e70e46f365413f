"""Prepared work: tasks handed to the anchor, workers run on clean worktrees, capability tiers, drafts on
``hive/`` branches, approvals bound to a diff and a base, speculative merges, rescue of stuck sessions, and
standing approvals.

May import: ``gitive.anchor.gate`` (prepared items go through it), ``gitive.anchor.base`` and the floors below
the anchor. Never ``obligations`` or the runtime.
"""
