"""Obligations: the event vocabulary, CEL conditions checked when written and evaluated three ways, the
obligation records and a person's decisions about them, and the dangling-work queries that feed the gate.

Owns ``events.json`` (the vocabulary, also ``refs_schema/events.json``).
May import: ``gitive.anchor.gate`` (the candidate items it offers), ``gitive.anchor.base``, and the floors below
the anchor (``core`` to ``daemon``). Never the runtime (``tick``, ``runner``) or ``prepared``.
"""
