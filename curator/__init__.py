"""memcurate's engine: everything but the user interface."""

__version__ = "0.1.0"
