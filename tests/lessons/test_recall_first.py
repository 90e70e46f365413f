"""The rule that keeps the lexical first in front when dense recall is fused in (``recall._keep_lexical_first``):
meaning takes the first place from the words' first only when it finds that lesson unrelated, and never for
another project's lesson over this project's."""

from __future__ import annotations

from gitive.lessons import recall
from gitive.lessons.recall import _keep_lexical_first, _Row

FLOOR = 0.2
HERE = "project-here"


def _row(lesson: str, project: str = HERE) -> _Row:
    return _Row(lesson, "project", project, 0, 0, 0)


def _ranked(*rows: tuple[float, _Row]) -> recall.Ranked:
    return [(score, row, [(score, "text")]) for score, row in rows]


def _first(fused: recall.Ranked, lexical: recall.Ranked, similar: dict[str, float]) -> str:
    _keep_lexical_first(fused, lexical[0][1], similar, HERE, FLOOR)
    assert [entry[0] for entry in fused] == sorted((entry[0] for entry in fused), reverse=True)
    return fused[0][1].lesson


def test_a_lexical_first_related_in_meaning_keeps_its_place() -> None:
    words, meaning = _row("words"), _row("meaning")
    lexical = _ranked((1.1, words), (0.9, meaning))
    fused = _ranked((1.0, meaning), (0.95, words))
    assert _first(fused, lexical, {"words": 0.30, "meaning": 0.58}) == "words"
    assert "not unrelated in meaning" in fused[0][2][-1][1]


def test_meaning_takes_the_first_place_from_a_lexical_first_it_finds_unrelated() -> None:
    words, meaning = _row("words"), _row("meaning")
    lexical = _ranked((1.1, words), (0.9, meaning))
    fused = _ranked((1.0, meaning), (0.95, words))
    assert _first(fused, lexical, {"words": 0.12, "meaning": 0.40}) == "meaning"
    # ... but only for a lesson nearer in meaning than the one it displaces
    fused = _ranked((1.0, meaning), (0.95, words))
    assert _first(fused, lexical, {"words": 0.12, "meaning": 0.10}) == "words"


def test_another_projects_lesson_never_displaces_this_projects_on_meaning_alone() -> None:
    words, sibling = _row("words"), _row("sibling", project="project-next-door")
    lexical = _ranked((1.1, words), (0.9, sibling))
    fused = _ranked((1.0, sibling), (0.95, words))
    assert _first(fused, lexical, {"words": 0.05, "sibling": 0.60}) == "words"
    # between two lessons of other projects, meaning decides as for any other pair
    other = _row("other", project="project-next-door")
    lexical = _ranked((1.1, other), (0.9, sibling))
    fused = _ranked((1.0, sibling), (0.95, other))
    assert _first(fused, lexical, {"other": 0.05, "sibling": 0.60}) == "sibling"


def test_the_lexical_first_is_the_fused_ranking_shifted_by_the_text_figure() -> None:
    a, b, c = _row("a"), _row("b"), _row("c")
    fused = _ranked((1.0, a), (0.9, b), (0.8, c))
    # b's words alone are worth 0.3 more than its fused text figure, a's 0.2 less: b comes first lexically
    assert recall._lexical_first(fused, {"a": 0.5, "b": 0.2, "c": 0.1}, {"a": 0.3, "b": 0.5, "c": 0.1}) == b
    assert recall._lexical_first(fused, {"a": 0.0, "b": 0.1, "c": 0.2}, {"a": 0.0, "b": 0.1, "c": 0.5}) == c
    # equal scores: the lesson id decides, as in the fused ranking
    assert recall._lexical_first(_ranked((1.0, b), (1.0, a)), {}, {}) == a


def test_a_candidates_score_is_the_sum_of_the_signals_the_page_explains() -> None:
    now = 400 * recall.DAY_MS
    rows = [_Row("a", "project", HERE, 0, 0, 0), _Row("b", "team", "", now - 3 * recall.DAY_MS, 5, 4),
            _Row("c", "project", "project-next-door", now, 2, 0), _Row("d", "personal", "", now - 89_999_999, 1, 1)]
    for row in rows:
        for text, overlap in ((0.0, 0.0), (0.7, 0.0), (0.0, 1.3), (0.37, 0.4)):
            for project in (HERE, None):
                parts = recall._signals(row, text, overlap, project, now)
                assert recall._score(row, text, overlap, project, now) == sum(p[0] for p in parts)
