"""The packaged static embedding model: the weights and tokenizer the ``wordllama`` package ships, read straight
from its installed files, so ``pip install gitive[semantic]`` gives a dense backend with no hub, no torch, no GPU.

WordLlama's model is a 32,000-token table of 256-dimension vectors (Llama 2's tokenizer; 16 MB in
safetensors) whose sentence vector is the mean of its tokens' vectors: a question costs a tokenizer call and a
few hundred additions. We read the two files ourselves instead of calling ``WordLlama.load``: that function
looks for the tokenizer in a folder the wheel does not have and then downloads it, and importing the package
also loads pydantic and requests. Here nothing but ``tokenizers``, ``safetensors`` and numpy is imported and
nothing can reach the network: a missing file is an error, reported once by the backend.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

PACKAGE = "wordllama"
WEIGHTS = Path("weights") / "l2_supercat_256.safetensors"
TOKENIZER = Path("tokenizers") / "l2_supercat_tokenizer_config.json"
TENSOR = "embedding.weight"


@lru_cache(maxsize=1)
def installed() -> Path | None:
    """The installed package's folder when it holds both files (found without importing the package)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    return root if (root / WEIGHTS).is_file() and (root / TOKENIZER).is_file() else None


class StaticModel:
    """A token-vector table and its tokenizer; ``encode`` gives each text the mean of its tokens' vectors."""

    def __init__(self, embedding: Any, tokenizer: Any, revision: str = "") -> None:
        self.embedding = embedding  # (vocabulary, dimensions) float32
        self.tokenizer = tokenizer
        self.revision = revision  # names the weights in stored vectors' key: a new release embeds again

    @classmethod
    def packaged(cls) -> StaticModel:
        root = installed()
        if root is None:
            raise FileNotFoundError(f"the {PACKAGE} package (pip install 'gitive[semantic]') is not installed")
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(root / TOKENIZER))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        with safe_open(str(root / WEIGHTS), framework="np") as weights:
            embedding = np.ascontiguousarray(weights.get_tensor(TENSOR), dtype=np.float32)
        from importlib.metadata import version

        return cls(embedding, tokenizer, f"{PACKAGE} {version(PACKAGE)}")

    def encode(self, texts: Sequence[str]) -> Any:
        """One vector per text (zeros for a text with no tokens): all token rows gathered at once and summed
        per text with ``np.add.reduceat``, so a batch of lessons costs no Python loop over tokens."""
        import numpy as np

        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        counts = np.array([len(e.ids) for e in encoded], dtype=np.int64)
        out = np.zeros((len(encoded), self.embedding.shape[1]), dtype=np.float32)
        if counts.sum() == 0:
            return out
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in encoded if e.ids])
        np.clip(ids, 0, self.embedding.shape[0] - 1, out=ids)
        filled = counts > 0
        starts = np.concatenate([[0], np.cumsum(counts[filled])[:-1]])
        out[filled] = np.add.reduceat(self.embedding[ids], starts, axis=0) / counts[filled, None]
        return out
