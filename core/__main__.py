"""``python -m itemscore``: the same command line as the ``itemscore`` script."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
