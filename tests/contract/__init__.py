"""The contract suite against the real Claude Code (a package, so its conftest is contract.conftest and
never shadows tests/conftest.py for the rest of the suite)."""
