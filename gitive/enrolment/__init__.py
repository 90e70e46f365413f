"""Changing who is in the team: founding, inviting, joining and attaching, removing, roles, person keys and the
migration of a team founded before person keys. Each reads the indexed roster to check who may do what before
anything is signed, so this floor stands above ``index`` (and ``team``, whose roster merge it feeds)."""
