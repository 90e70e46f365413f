"""A tiny model2vec static model the dense-recall tests build themselves (no download, no hub).

Words of one meaning share a direction, so "flaky" and "intermittent" embed close together while sharing no
letters: enough to check that the dense path finds a paraphrase the lexical path cannot.
"""

from __future__ import annotations

from pathlib import Path

MEANINGS = {
    "flaky": ["flaky", "intermittent", "sporadic", "random", "sometimes"],
    "database": ["database", "postgres", "db", "sql", "schema"],
    "payment": ["payment", "charge", "billing", "invoice", "refund"],
    "slow": ["slow", "sluggish", "latency", "lag", "timeout"],
    "test": ["test", "tests", "suite", "pytest", "case"],
}


def build(target: Path, dims: int = 16) -> Path:
    """Write the model to ``target`` (a model2vec directory) and return it."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words = ["[UNK]", "[PAD]"] + [w for group in MEANINGS.values() for w in group]
    tokenizer = Tokenizer(models.WordLevel({w: n for n, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    rng = np.random.default_rng(7)
    axes = {meaning: rng.normal(size=dims) for meaning in MEANINGS}
    vectors = np.zeros((len(words), dims), dtype=np.float32)
    for n, word in enumerate(words):
        meaning = next((m for m, group in MEANINGS.items() if word in group), None)
        if meaning is not None:
            vectors[n] = axes[meaning] + rng.normal(scale=0.05, size=dims)
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(target))
    return target
