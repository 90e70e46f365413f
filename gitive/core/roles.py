"""The roles a roster gives a machine, and the team version this code founds (DESIGN §8 "Authority").

Plain names every floor may use: the roster merge and its rules (``gitive.team``), the index that reads what
they decided, and the commands that change the roster.
"""

ADMIN, MEMBER, ANCHOR = "admin", "member", "anchor"
ROLES = (ADMIN, MEMBER, ANCHOR)
ANCHOR_PERSON = "anchor"  # the reserved person name of the anchor machine, and only of it (gitive/enrolment/anchors.py)
TEAM_VERSION = 2  # the team version this code founds: roles, person keys and gestures from the start
