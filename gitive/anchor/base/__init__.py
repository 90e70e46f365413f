"""What every room of the anchor stands on: the step protocol and the tick's context, the anchor's own state
database (cursors, queue, problems, runs) and its turn-tier notices to agents' sessions.

May import: ``gitive.core``, ``store``, ``team``, ``index``. Nothing else in ``gitive.anchor`` imports below it.
"""
