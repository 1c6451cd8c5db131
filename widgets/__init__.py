"""The Textual review UI: a thin view over curator/ (the engine never imports this package)."""
