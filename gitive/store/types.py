"""The names the rest of gitive uses for git things: a repository handle and the ids of its objects.

Only ``store/`` talks to pygit2 (docs/layout.md, the ``pygit2`` import-linter contract). A module above it
holds a repository as a :data:`Repo` and hands it back to a named function of ``store/``; it never reaches
into it. ``Repo`` exists only for type checkers (``from gitive.store.types import Repo`` under
``TYPE_CHECKING``), so naming it loads nothing: read commands and hooks stay free of pygit2.

The ids are ``NewType`` strings (lowercase hex), as dulwich keeps ``ObjectID`` and ``Ref``, so a tree id is
not passed where a commit id belongs. They cost nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NewType

CommitId = NewType("CommitId", str)  # 40 hex digits of a commit
TreeId = NewType("TreeId", str)  # 40 hex digits of a tree
BlobId = NewType("BlobId", str)  # 40 hex digits of a blob

if TYPE_CHECKING:
    from typing import TypeAlias

    import pygit2

    Repo: TypeAlias = pygit2.Repository  # an open repository: pass it to store/, never reach into it
