"""What needs a person now: one queue over reviews, obligations, the gate's items and mail, in one account."""
