"""The optional dense backend (``pip install gitive[semantic]``): a static embedding model fused with BM25.

A model2vec static model turns a text into a vector by averaging token vectors: no network, no GPU, a fraction
of a millisecond per question. It is used only when one is configured (``hive.recallModel`` in git config, or
``GITIVE_RECALL_MODEL``): a local model directory, or a hub name that model2vec fetches once into its cache.
Unconfigured, nothing here is imported and nothing is downloaded.

Each shown lesson's vector (text, applicability, tags, symptoms) is stored in the index (``lesson_vectors``,
float16, keyed by its ``lesson_text`` row and the model), filled in for rows added since the last search. A
process keeps the matrix in memory and reads only the rows added since; a question costs one matrix product.
A model that cannot be loaded is reported once and search goes on lexically: recall never fails on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitive.store.types import Repo

CONFIG_KEY = "hive.recallModel"
ENV = "GITIVE_RECALL_MODEL"
BATCH = 512

_MODELS: dict[str, Any] = {}
_MATRICES: dict[tuple[str, int, int, str], _Matrix] = {}
_LOCK = threading.Lock()


def configured(repo: Repo | None) -> str | None:
    """The configured model (a path or hub name), or None: the environment wins over git config."""
    if os.environ.get(ENV) is not None:
        return os.environ[ENV].strip() or None
    if repo is None:
        return None
    from gitive.store.repo import config_get

    return (config_get(repo, CONFIG_KEY) or "").strip() or None


def for_repo(repo: Repo | None) -> Backend | None:
    """The backend configured for ``repo``, or None when none is."""
    name = configured(repo)
    return Backend(name) if name else None


class Backend:
    """One configured model; :meth:`rankings` gives one dense ranking per phrasing."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problem: str | None = None
        self._model: Any = None

    def model(self) -> Any:
        """The loaded model (loaded once per process), or None with :attr:`problem` saying why."""
        if self._model is None and self.problem is None:
            with _LOCK:
                try:
                    self._model = _MODELS.get(self.name) or _load(self.name)
                    _MODELS[self.name] = self._model
                except Exception as exc:  # a broken or missing model never stops recall
                    self.problem = f"the recall model {self.name!r} did not load ({_short(exc)}); searching lexically"
        return self._model

    @property
    def key(self) -> str:
        """Names the model's vectors in the index: its name and its embedding's shape."""
        model = self.model()
        shape = getattr(getattr(model, "embedding", None), "shape", ())
        return hashlib.blake2b(json.dumps([self.name, list(shape)]).encode(), digest_size=8).hexdigest()

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        vectors = np.asarray(self.model().encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def rankings(self, conn: sqlite3.Connection, texts: Sequence[str], pool: int) -> list[dict[str, float]]:
        """One ranking per text: lesson id -> cosine similarity, the ``pool`` nearest (empty when the model
        is unavailable)."""
        if self.model() is None or not texts:
            return []
        key = self.key
        update(conn, self, key)
        matrix = _matrix(conn, key)
        if matrix.rowids.size == 0:
            return []
        every = matrix.vectors @ self.embed(texts).T  # one product for all the texts
        out = []
        for column in range(every.shape[1]):
            scores = every[:, column]
            top = _top(scores, pool * 2)
            hits = {int(matrix.rowids[i]): float(scores[i]) for i in top if scores[i] > 0}
            out.append(_by_lesson(conn, hits, pool))
        return out


def _load(name: str) -> Any:
    # One question is a few short texts and one matrix product: thread pools only add start-up and, on a
    # busy machine, waiting (measured: 25 ms instead of 7 for the product at 10,000 lessons on 2 loaded cores).
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from model2vec import StaticModel

    path = Path(name).expanduser()
    return StaticModel.from_pretrained(str(path) if path.exists() else name, force_download=False)


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__


def _document(text: str, applicability: str, tags: str, symptoms: str | None) -> str:
    listed = " ".join(json.loads(symptoms)) if symptoms else ""
    return "\n".join(p for p in (text, applicability, " ".join(json.loads(tags)), listed) if p)


def update(conn: sqlite3.Connection, backend: Backend, key: str) -> int:
    """Embed the shown lessons added since the last update (by ``lesson_text`` rowid); return how many.

    A read-only connection embeds nothing; its searches use the vectors already stored.
    """
    hwm_key = f"vectors:{key}"
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (hwm_key,)).fetchone()
    hwm = int(row[0]) if row else 0
    rows = conn.execute(
        "SELECT t.fts_rowid, b.text, b.applicability, l.tags, b.symptoms FROM lesson_text t "
        "JOIN lesson_bodies b ON b.body_hash = t.body_hash JOIN lessons l ON l.id = t.lesson "
        "WHERE t.fts_rowid > ? ORDER BY t.fts_rowid", (hwm,)).fetchall()
    if not rows:
        return 0
    try:
        conn.execute("SAVEPOINT vectors")
    except sqlite3.OperationalError:
        return 0
    try:
        for start in range(0, len(rows), BATCH):
            chunk = rows[start:start + BATCH]
            vectors = backend.embed([_document(*r[1:]) for r in chunk])
            conn.executemany("INSERT OR REPLACE INTO lesson_vectors VALUES (?, ?, ?)",
                             [(r[0], key, v.astype("float16").tobytes()) for r, v in zip(chunk, vectors, strict=True)])
        conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (hwm_key, str(rows[-1][0])))
        conn.execute("RELEASE vectors")
    except sqlite3.OperationalError:  # a read-only connection, or the database is busy: use what is stored
        conn.execute("ROLLBACK TO vectors")
        conn.execute("RELEASE vectors")
        return 0
    return len(rows)


class _Matrix:
    """The stored vectors of one model in one index, as one float16 matrix with their rowids."""

    def __init__(self) -> None:
        self.drops = ""
        self._reset()

    def _reset(self) -> None:
        import numpy as np

        self.rowids = np.zeros(0, dtype=np.int64)
        self.vectors = np.zeros((0, 0), dtype=np.float32)  # float32 in memory: BLAS has no float16 product
        self.high = 0

    def top_up(self, conn: sqlite3.Connection, key: str) -> None:
        import numpy as np

        drops = (conn.execute("SELECT value FROM meta WHERE key = 'lesson_text_drops'").fetchone() or ("0",))[0]
        if drops != self.drops:  # rows were removed: read everything again
            self._reset()
            self.drops = drops
        rows = conn.execute("SELECT fts_rowid, vector FROM lesson_vectors WHERE model = ? AND fts_rowid > ? "
                            "ORDER BY fts_rowid", (key, self.high)).fetchall()
        if not rows:
            return
        fresh = np.stack([np.frombuffer(v, dtype=np.float16) for _, v in rows]).astype(np.float32)
        ids = np.array([r for r, _ in rows], dtype=np.int64)
        self.vectors = fresh if self.vectors.size == 0 else np.vstack([self.vectors, fresh])
        self.rowids = np.concatenate([self.rowids, ids])
        self.high = int(ids[-1])


def _matrix(conn: sqlite3.Connection, key: str) -> _Matrix:
    path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    born = conn.execute("SELECT min(at) FROM migrations").fetchone()[0] if path else None
    if not path or born is None:
        matrix = _Matrix()
        matrix.top_up(conn, key)
        return matrix
    with _LOCK:
        ident = (path, os.stat(path).st_ino, born, key)
        matrix = _MATRICES.setdefault(ident, _Matrix())
        matrix.top_up(conn, key)
        return matrix


def _by_lesson(conn: sqlite3.Connection, hits: dict[int, float], pool: int) -> dict[str, float]:
    """Rowid scores as lesson id scores (rows no longer shown drop out), the ``pool`` best."""
    found = dict(conn.execute("SELECT fts_rowid, lesson FROM lesson_text WHERE fts_rowid IN "
                              "(SELECT value FROM json_each(?))", (json.dumps(sorted(hits)),)).fetchall())
    ranked = sorted(((hits[r], lesson) for r, lesson in found.items()), reverse=True)[:pool]
    return {lesson: score for score, lesson in ranked}


def _top(scores: Any, count: int) -> Any:
    """Indexes of the ``count`` highest scores, best first (a partial sort: the rest stay unordered)."""
    import numpy as np

    if scores.size > count:
        part = np.argpartition(-scores, count)[:count]
        return part[np.argsort(-scores[part])]
    return np.argsort(-scores)
