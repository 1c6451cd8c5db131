"""The Textual review UI: a thin view over curator/ (built in a later issue)."""
