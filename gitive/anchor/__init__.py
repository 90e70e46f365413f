"""The future tense: the event vocabulary, obligations with CEL conditions, and the anchor's deterministic tick."""
