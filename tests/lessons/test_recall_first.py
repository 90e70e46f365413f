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
    _keep_lexical_first(fused, lexical, similar, HERE, FLOOR)
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
