"""itemscore inside the harnesses, and the harnesses' rules inside itemscore.

- :mod:`itemscore.integrations.inspect`: ``itemscore_scorer(metric, **options)``, any itemscore
  metric as an inspect_ai scorer (the ``inspect`` extra).
- :mod:`itemscore.integrations.harness_rules`: the harnesses' own comparisons, which items read
  with ``rules="harness"`` carry in their metadata.

Nothing here is imported by ``import itemscore``: each module is imported when named.
"""

from __future__ import annotations

__all__: list[str] = []
