"""The team's published presence, read: the newest signed snapshot of each active member's machine.

Below the daemon (which builds and publishes this machine's snapshot) so that every reader, the dashboard
included, sees the same verified directory without loading the daemon: the roster, not the snapshot, says
whose machine it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gitive.core import canonical
from gitive.store import presence as store_presence
from gitive.store import refs

if TYPE_CHECKING:
    from gitive.store.types import Repo
    from gitive.team.hive import Hive

LIVE_MS = 30 * 60_000  # a session seen within this long is live


def _sources(hive: Hive, include_self: bool) -> dict[str, list[tuple[Repo, str]]]:
    """Every presence ref to read of each machine, in every shared store: machine -> (repo, tip); this
    machine's own published one only when asked for."""
    found: dict[str, list[tuple[Repo, str]]] = {}
    if include_self:
        tip = refs.tip(hive.store, refs.presence_ref(hive.me))
        if tip:
            found[hive.me] = [(hive.store, tip)]
    for repo in hive.shared_stores():
        for ref, tip in refs.tips(repo, "refs/hive-remotes/").items():
            machine = ref.rsplit("/", 1)[-1]
            if ref.endswith(f"/presence/{machine}") and machine != hive.me:
                found.setdefault(machine, []).append((repo, tip))
    return found


def peers(hive: Hive, members: dict[str, dict[str, Any]], *, include_self: bool = False) -> list[dict[str, Any]]:
    """Peers' presence snapshots: the newest signed version of each machine the roster lists as active.

    ``include_self`` adds this machine's own published snapshot (a read-only view of the whole team).
    """
    out: dict[str, dict[str, Any]] = {}
    for machine, sources in _sources(hive, include_self).items():
        member = members.get(machine)
        if not member or not member["active"]:
            continue
        repo = sources[0][0]
        found = store_presence.newest(repo, hive.team_id, machine, [tip for r, tip in sources if r is repo])
        if found is None:
            continue
        try:
            snap = canonical.loads(found.data)
        except Exception:  # a peer's malformed snapshot is ignored, never a crash
            continue
        if isinstance(snap, dict) and snap.get("machine") == machine:
            snap["person"] = member["person"]  # the roster, not the peer, says whose machine it is
            snap["machine_name"] = member["name"]
            for s in snap.get("sessions") or []:
                if isinstance(s, dict) and isinstance(s.get("name"), str):
                    s["address"] = f"{member['person']}/{s['name']}"
            out[machine] = snap
    return list(out.values())
