"""One module per view; each has ``render(config)``."""
