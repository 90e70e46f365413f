"""What a real-harness test claims about what the model received, checked all at once and reported together.

A harness session is slow to run, so one session backs several claims (the card in the first request, the
lesson after the edit, nothing from gitive in the user's words, …). :class:`Claims` checks each, and
:meth:`Claims.verify` fails with every claim that did not hold, the run's requests and the harness's output,
instead of stopping at the first. With ``GITIVE_HARNESS_REPORT=<file>`` each claim is also appended to that
file as a JSON line (harness, claim, held, load), from which the pass table in the notes is made.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from testing.harness.protocols import View
from testing.harness.run import Run

CARD_HEAD = "Team memory for this repository (gitive)"
# What only gitive writes into a model's context: its frames (also HTML-escaped, as Gemini passes them on).
_FRAMES = re.compile(r"(?:<|&lt;|&#60;|&#x3c;)\s*/?\s*team-(?:memory|message|notice)", re.IGNORECASE)


def gitive_marks(text: str, extra: Iterable[str] = ()) -> list[str]:
    """Pieces of ``text`` only gitive could have put there: a frame, the card's head, or any of ``extra``."""
    found = [m.group(0) for m in _FRAMES.finditer(text)]
    found += [s for s in (CARD_HEAD, *extra) if s and s in text]
    return found


@dataclass
class Claims:
    """The claims about one run; ``verify`` raises listing each one that failed."""

    run: Run
    load: str = "idle"
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    def check(self, claim: str, held: bool, detail: str = "") -> bool:
        self.results.append((claim, bool(held), detail))
        return bool(held)

    def failed(self) -> list[tuple[str, bool, str]]:
        return [r for r in self.results if not r[1]]

    def verify(self) -> None:
        self._report()
        bad = self.failed()
        if bad:
            lines = "\n".join(f"  - {claim}: {detail}" for claim, _, detail in bad)
            raise AssertionError(f"{len(bad)} of {len(self.results)} claims failed ({self.load}):\n{lines}\n"
                                 f"{self.run}")

    def _report(self) -> None:
        path = os.environ.get("GITIVE_HARNESS_REPORT")
        if not path:
            return
        with open(path, "a", encoding="utf-8") as fh:
            for claim, held, detail in self.results:
                fh.write(json.dumps({"harness": self.run.harness, "claim": claim, "held": held, "load": self.load,
                                     "detail": detail[:300], "seconds": round(self.run.seconds, 2)}) + "\n")


def where(views: list[View], text: str) -> list[int]:
    """The indexes of the agent requests whose context holds ``text`` anywhere (any role)."""
    return [i for i, v in enumerate(views) if any(text in s.text for s in v.segments)]


def first_with(views: list[View], text: str) -> int | None:
    found = where(views, text)
    return found[0] if found else None


def roles_of(view: View, text: str) -> list[str]:
    """The roles under which ``text`` reaches the model in one request."""
    return sorted({s.role for s in view.segments if text in s.text})
