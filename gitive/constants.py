"""Numbers and names shared across the package, in one place."""

from __future__ import annotations

PROTOCOL = "hive/1"
MAX_SKEW_MS = 86_400_000  # entries stamped more than a day ahead are refused
MAX_ENTRY_BYTES = 96 * 1024  # a message body may be 64 KiB; the rest is envelope
MAX_NAME_LEN = 64
ENTRY_FILE = "entry.json"
MAX_BODY_BYTES = 64 * 1024  # a lesson body is at most 1,200 characters of text, plus its applicability and quote

LOG_REF_PREFIX = "refs/hive/logs/"
BODIES_REF_PREFIX = "refs/hive/bodies/"
PRESENCE_REF_PREFIX = "refs/hive/presence/"
REMOTES_REF_PREFIX = "refs/hive-remotes/"
PINNED_REF_PREFIX = "refs/hive-pinned/"

LOG_NAMES = ("roster", "team", "project", "mail", "ledger", "personal")
# Project-scope entries go to one log per (author, project): "project-" + the project id's first 16 hex digits.
# One index may read several projects' stores of a team (an attached repository reads the team store, which
# may be another project's repository); one shared name would make two projects' logs of one author collide.
# "project" (no suffix) is what versions before 2026-12 wrote; it is still read.
PROJECT_LOG_PREFIX = "project-"

# Repository upkeep: pack when loose objects or refs pile up (costs measured in ECOSYSTEM-NOTES).
LOOSE_OBJECTS_PACK_THRESHOLD = 2_000
LOOSE_REFS_PACK_THRESHOLD = 200
# Upkeep (pack, and prune gitive's own garbage) runs when loose objects grew by this much since it last ran:
# about 125 lessons' worth, so garbage (mostly replaced 7 KB root trees of body snapshots) stays ~1 MB.
UPKEEP_LOOSE_GROWTH = 1_000

INVITE_DEFAULT_TTL_MS = 7 * 86_400_000
CAS_RETRIES = 50
STALE_LOCK_SECONDS = 30

# What a log chain can be refused for (store.verify), and how `doctor` names it.
CHAIN_PROBLEMS = ("malformed", "bad-signature", "wrong-signer", "wrong-log", "seq-gap", "bad-link", "future")
