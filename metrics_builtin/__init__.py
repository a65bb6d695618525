"""The built-in metrics, registered through the ``itemscore.metrics`` entry-point group."""
