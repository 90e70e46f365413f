"""The dense backend (``pip install gitive[semantic]``): a static embedding model fused with BM25.

A static model turns a text into a vector by averaging token vectors: no network, no GPU, no torch, a fraction
of a millisecond per question. Installed, it is on by default: the model the ``wordllama`` package ships
(``lessons.static_model``), read from site-packages. ``hive.recallModel`` in git config or
``GITIVE_RECALL_MODEL`` (the environment wins) choose another: ``off`` (or empty) for lexical recall only,
``wordllama`` for the packaged model, or a local model2vec directory. A hub name is read from the local cache
only (``HF_HUB_OFFLINE``): gitive never downloads weights. Without the extra installed and nothing configured,
nothing here is imported and search is lexical.

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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from gitive.store.types import Repo

CONFIG_KEY = "hive.recallModel"
ENV = "GITIVE_RECALL_MODEL"
PACKAGED = "wordllama"  # the model the wordllama package ships: the default once gitive[semantic] is installed
PACKAGED_FLOOR = 0.2
OFF = frozenset({"", "off", "none", "lexical", "0", "false", "no"})
BATCH = 512

_MODELS: dict[str, Any] = {}
_MATRICES: dict[tuple[str, int, int, str], _Matrix] = {}
_LOCK = threading.Lock()


def configured(repo: Repo | None) -> str | None:
    """The model to use (``PACKAGED``, a path or a cached hub name), or None for lexical recall only.

    The environment wins over git config; either may say ``off``. With neither set, the packaged model when
    its package is installed (looked up without importing it)."""
    name = os.environ.get(ENV)
    if name is None and repo is not None:
        from gitive.store.repo import config_get

        name = config_get(repo, CONFIG_KEY)
    if name is not None:
        name = name.strip()
        return None if name.lower() in OFF else name
    from gitive.lessons.static_model import installed

    return PACKAGED if installed() is not None else None


def for_repo(repo: Repo | None) -> Backend | None:
    """The backend for ``repo`` (one per model and process, so its loaded model and problem are shared), or
    None when recall is lexical."""
    name = configured(repo)
    if not name:
        return None
    with _LOCK:
        return _BACKENDS.setdefault(name, Backend(name))


_BACKENDS: dict[str, Backend] = {}


class Backend:
    """One configured model; :meth:`rankings` gives one dense ranking per phrasing."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problem: str | None = None
        self._model: Any = None
        self._key: str | None = None
        # Below this cosine a lesson is not near the question at all (the packaged model gives unrelated
        # text about 0.15, a right answer 0.43 at the median and 0.23 at the tenth percentile).
        self.floor = PACKAGED_FLOOR if name == PACKAGED else 0.0

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
        """Names the model's vectors in the index: its name and its embedding's shape (worked out once: a
        loaded model never changes)."""
        if self._key is None:
            model = self.model()
            shape = getattr(getattr(model, "embedding", None), "shape", ())
            named = [self.name, list(shape)] + ([model.revision] if getattr(model, "revision", "") else [])
            self._key = hashlib.blake2b(json.dumps(named).encode(), digest_size=8).hexdigest()
        return self._key

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        vectors = np.asarray(self.model().encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def rankings(self, conn: sqlite3.Connection, texts: Sequence[str], pool: int) -> list[dict[str, float]]:
        """One ranking per text: lesson id -> cosine similarity, the ``pool`` nearest (empty when the model
        is unavailable)."""
        return self.near(conn, texts, pool).rankings

    def near(self, conn: sqlite3.Connection, texts: Sequence[str], pool: int) -> Near:
        """The ``pool`` nearest lessons per text, and (:meth:`Near.similarity`) any lesson's similarity to the
        texts, from the same matrix product."""
        if self.model() is None or not texts:
            return Near([], None)
        key = self.key
        update(conn, self, key)
        matrix = _matrix(conn, key)
        if matrix.rowids.size == 0:
            return Near([], None)
        columns, lessons = matrix.columns, matrix.lessons  # as of now: another thread may read them again
        asked = self.embed(texts)
        every = asked @ columns  # one product for all the texts: a row of cosines per text
        older = _older(conn, self, key)
        near_old = older.vectors @ asked.T if older.successors else None
        out = []
        for column, (scores, top) in enumerate(zip(every, _top(every, pool), strict=True)):
            ranking = {lessons[i]: score for i, score in zip(top.tolist(), scores[top].tolist(), strict=True)
                       if score > self.floor}
            if near_old is not None:
                _credit_successors(ranking, older.successors, near_old[:, column], pool, self.floor)
            out.append(ranking)
        return Near(out, (matrix, lessons, every, older.successors, near_old))


class Near:
    """What one question's matrix product found: the dense rankings, and every lesson's similarity."""

    def __init__(self, rankings: list[dict[str, float]], product: Any) -> None:
        self.rankings = rankings
        self._product = product

    def similarity(self, lessons: Iterable[str]) -> dict[str, float]:
        """Each shown lesson's cosine to the nearest of the texts (a superseded predecessor's, discounted,
        where that is higher), whether or not it made a ranking's pool: a lesson just outside the pool is not
        unrelated."""
        if self._product is None:
            return {}
        matrix, shown, every, successors, near_old = self._product
        index = matrix.index() if matrix.lessons is shown else {lesson: n for n, lesson in enumerate(shown)}
        out = {}
        for lesson in set(lessons):
            at = index.get(lesson)
            if at is not None and at < every.shape[1]:
                out[lesson] = float(every[:, at].max())
            if near_old is not None and lesson in successors:
                credited = max(float(near_old[n].max()) for n, s in enumerate(successors) if s == lesson) * OLD_DISCOUNT
                out[lesson] = max(out.get(lesson, 0.0), credited)
        return out


def _load(name: str) -> Any:
    # One question is a few short texts and one matrix product: thread pools only add start-up and, on a
    # busy machine, waiting (measured: 25 ms instead of 7 for the product at 10,000 lessons on 2 loaded cores).
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if name == PACKAGED:
        from gitive.lessons.static_model import StaticModel as Packaged

        return Packaged.packaged()
    path = Path(name).expanduser()
    if not path.exists():
        os.environ["HF_HUB_OFFLINE"] = "1"  # a hub name: its cached copy or nothing, never a download
    from model2vec import StaticModel

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
    """The stored vectors of one model in one index, as one float32 matrix with their rowids and the lessons
    those rows show (read with the vectors: a row no longer shown bumps ``lesson_text_drops``, and the next
    search reads everything again), so a question needs no lookup of its nearest rows' lessons."""

    def __init__(self) -> None:
        self.drops = ""
        self._reset()

    def _reset(self) -> None:
        import numpy as np

        self.rowids = np.zeros(0, dtype=np.int64)
        # One column per lesson, float32 (BLAS has no float16 product), stored transposed and contiguous: a
        # few question vectors times (dimensions x lessons) took 30% less CPU than the same product against
        # the transpose of a (lessons x dimensions) matrix (1.7 ms against 2.3 at 10,000 lessons, 6 texts).
        self.columns = np.zeros((0, 0), dtype=np.float32)
        self.lessons: list[str] = []
        self._index: dict[str, int] | None = None
        self.high = 0

    def top_up(self, conn: sqlite3.Connection, key: str) -> None:
        import numpy as np

        drops = (conn.execute("SELECT value FROM meta WHERE key = 'lesson_text_drops'").fetchone() or ("0",))[0]
        if drops != self.drops:  # rows were removed: read everything again
            self._reset()
            self.drops = drops
        rows = conn.execute("SELECT v.fts_rowid, v.vector, t.lesson FROM lesson_vectors v "
                            "JOIN lesson_text t ON t.fts_rowid = v.fts_rowid WHERE v.model = ? AND v.fts_rowid > ? "
                            "ORDER BY v.fts_rowid", (key, self.high)).fetchall()
        if not rows:
            return
        fresh = np.stack([np.frombuffer(v, dtype=np.float16) for _, v, _ in rows], axis=1).astype(np.float32)
        ids = np.array([r for r, _, _ in rows], dtype=np.int64)
        self.columns = np.ascontiguousarray(fresh if self.columns.size == 0 else np.hstack([self.columns, fresh]))
        self.rowids = np.concatenate([self.rowids, ids])
        self.lessons += [lesson for _, _, lesson in rows]
        self._index = None
        self.high = int(ids[-1])

    def index(self) -> dict[str, int]:
        """Lesson id -> its row in the matrix."""
        if self._index is None:
            self._index = {lesson: n for n, lesson in enumerate(self.lessons)}
        return self._index


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


def _top(scores: Any, count: int) -> Any:
    """Per row of ``scores``, the column indexes of its ``count`` highest scores, best first (one partial sort
    of every row at once: the rest stay unordered)."""
    import numpy as np

    if scores.shape[1] > count:
        part = np.argpartition(-scores, count, axis=1)[:, :count]
        return np.take_along_axis(part, np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1), axis=1)
    return np.argsort(-scores, axis=1)


# A question worded after an old version of a lesson ("do we compute ETAs from a fixed speed?") is about the
# current one: a superseded lesson's vector still names its topic, and its newest successor is credited with
# that similarity, a little discounted (its own words, when they match as well, still win).
OLD_DISCOUNT = 0.9


class _Older(NamedTuple):
    successors: list[str]  # per row: the newest shown lesson of that row's chain
    vectors: Any


_OLDER: dict[tuple[str, str], tuple[str, _Older]] = {}


def _older(conn: sqlite3.Connection, backend: Backend, key: str) -> _Older:
    """The vectors of superseded lessons and their newest successors (embedded once per process while the
    set of superseded lessons stays the same)."""
    import numpy as np

    from gitive.lessons.recall_superseded import superseded

    (count,) = conn.execute("SELECT count(*) FROM lesson_status WHERE state = 'superseded'").fetchone()
    path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    cached = _OLDER.get((path, key))
    if cached and cached[0] == str(count):  # a new version changes the count; a successor gone is not shown
        return cached[1]
    rows = superseded(conn)
    stamp = str(count)
    vectors = backend.embed([_document(*r[2:]) for r in rows]) if rows else np.zeros((0, 1), dtype=np.float32)
    made = _Older([r[1] for r in rows], vectors)
    if path:
        _OLDER[(path, key)] = (stamp, made)
    return made


def _credit_successors(ranking: dict[str, float], successors: list[str], scores: Any, pool: int,
                       floor: float) -> None:
    """Each successor gets its predecessors' similarity, discounted, where that beats its own (in place)."""
    for row, successor in enumerate(successors):
        credited = float(scores[row]) * OLD_DISCOUNT
        if credited > max(floor, ranking.get(successor, 0.0)):
            ranking[successor] = credited
    if len(ranking) > pool:
        for lesson in sorted(ranking, key=lambda k: ranking[k])[:len(ranking) - pool]:
            del ranking[lesson]
