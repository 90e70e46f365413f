"""The look-alike tables defang reads are generated from Unicode's data and are current; they hold what the
issue found passing (⊲ ◁ ≤ 〔 ❨, ≮) and leave ASCII prose punctuation alone."""

from __future__ import annotations

import unicodedata

import pytest

from gitive.capture import lookalikes
from testing import lookalikes as generator


def test_the_generated_module_is_current() -> None:
    if unicodedata.unidata_version != lookalikes.UNICODE_VERSION:
        pytest.skip(f"generated for Unicode {lookalikes.UNICODE_VERSION}; this Python has "
                    f"{unicodedata.unidata_version}")
    assert generator.main(["--check"]) == 0, "run: python -m testing.lookalikes"


@pytest.mark.parametrize("char", [*"<⊲◁≤≮＜﹤‹«〈⟨", "\u2329"])
def test_what_reads_as_less_than_is_an_angle(char: str) -> None:
    assert char in lookalikes.ANGLES


@pytest.mark.parametrize("char", list("〔❨“„「《【（"))
def test_other_opening_brackets_are_openers(char: str) -> None:
    assert char in lookalikes.OPENERS + lookalikes.ANGLES


def test_ascii_prose_punctuation_is_left_alone() -> None:
    assert not set("([{[") & set(lookalikes.ANGLES + lookalikes.OPENERS)
    assert set(lookalikes.ANGLES + lookalikes.OPENERS) & {chr(i) for i in range(128)} == {"<"}


def test_folding_tables_pair_up_and_fold_to_ascii() -> None:
    assert len(lookalikes.FOLD_FROM) == len(lookalikes.FOLD_TO) == len(set(lookalikes.FOLD_FROM))
    assert set(lookalikes.FOLD_TO) <= set("abcdefghijklmnopqrstuvwxyz0123456789-_/")
    folded = dict(zip(lookalikes.FOLD_FROM, lookalikes.FOLD_TO, strict=True))
    assert folded["е"] == "e" and folded["ο"] == "o" and folded["ℯ"] == "e"  # Cyrillic, Greek, script
    assert {"lt", "LT", "lang", "lsaquo", "laquo"} <= set(lookalikes.ENTITIES)
