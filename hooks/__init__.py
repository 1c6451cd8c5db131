"""Claude Code hook handlers. Stdlib and the light parts of curator only: these run on every turn."""
