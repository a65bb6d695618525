"""An example third-party metric package for itemscore."""
