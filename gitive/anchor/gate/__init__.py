"""The gate: candidate items, the fixed order that decides each (floor, preference, duplicate, urgency, alarm,
quiet hours, attention, digest), preferences and going live, the metadata-only ledger, shadow mode, the digest
and ``gitive why``.

May import: ``gitive.anchor.base`` and the floors below the anchor. Never ``obligations``, ``prepared`` or the
runtime: they offer items to the gate, the gate knows nothing of where they come from.
"""
