"""Paths that hold credentials: never published in presence or in file claims (metadata leaves the machine, a
secret's location does not), and the reads outbound screening watches for."""

from __future__ import annotations

import re

_CREDENTIALS = re.compile(
    r"(^|/)(\.env(\..*)?|\.envrc|\.netrc|\.pgpass|\.git-credentials|\.npmrc|\.pypirc|credentials(\.json)?|"
    r"id_(rsa|dsa|ecdsa|ed25519)(\.pub)?|.*\.(pem|key|p12|pfx|kdbx|keystore|jks)|secrets?\.(ya?ml|json|toml)|"
    r"\.aws/.*|\.ssh/.*|\.gnupg/.*|\.docker/config\.json|\.kube/config|.*token.*|.*secret.*|"
    r"\.config/gh/hosts\.yml|\.config/git/credentials|machine\.key)$", re.IGNORECASE)


def is_credential_path(path: str) -> bool:
    return bool(_CREDENTIALS.search(path.replace("\\", "/")))
