"""Pure building blocks: canonical bytes, ids, keys, signatures and record types. No git here."""
