"""Validators for ``refs_schema/``, built once per process with a crawled registry.

A ``referencing.Registry`` that is not crawled crawls every resource it holds again on each ``$ref`` lookup
(the validator does not keep the crawled registry it gets back): checking one team's entries took minutes of
CPU. Crawled once, a lookup is a dictionary read; what validates and what does not is unchanged.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parent.parent / "refs_schema"


@functools.cache
def _registry() -> Registry:
    registry: Registry = Registry()
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        registry = registry.with_resource(path.name, Resource.from_contents(json.loads(path.read_text())))
    return registry.crawl()


def validator(name: str = "entry.schema.json") -> Draft202012Validator:
    """A validator for ``refs_schema/name`` that resolves ``$ref`` to the other schema files by file name."""
    return Draft202012Validator(json.loads((SCHEMAS / name).read_text()), registry=_registry())
