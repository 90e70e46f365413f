"""The anchor: an always-on member that watches obligations, decides when a person is interrupted, and
prepares work on ``hive/`` branches. No model runs here.

The runtime lives in this folder and drives three rooms, each of which offers or decides but never drives:

- ``__main__``, ``control``: starting, stopping and asking a running anchor;
- ``runner``: one anchor per ``$GITIVE_HOME``, a tick every interval;
- ``tick``: fetch, ingest, new events, conditions, firings, then the rooms' steps in order;
- ``sources``, ``watchers``: new events per source, and watcher commands run;
- ``config``: reads ``anchor.yaml`` and hands each section to its room;
- ``obligations/``: the event vocabulary, CEL conditions, obligation records, dangling work;
- ``prepared/``: tasks, workers, tiers, drafts, approvals, speculative merges, rescue, standing approvals;
- ``gate/``: candidate items, the order that decides each, preferences, ledger, digest, ``gitive why``;
- ``base/``: the step protocol and the tick's context, the anchor's state database, its notices, config values.

Imports run down that list (``obligations`` and ``prepared`` are siblings that never import each other), as the
``anchor`` contract in ``pyproject.toml`` checks; docs/anchor.md draws the same map.
"""
