"""A package's names imported from its modules on first use (PEP 562 module __getattr__).

The hooks import one light module of a package (the index's folder check, MEMORY.md's entry grammar)
on every prompt: a package whose __init__ imported all of its modules would make them pay for
SQLite writers, the memory store and dataclasses they never use.

    __getattr__ = lazy_names(__name__, {"MemoryIndex": "memory_index", ...})
"""

from __future__ import annotations


def lazy_names(package: str, homes: dict[str, str]):
    """A module __getattr__ for `package` that imports `name` from `package.<homes[name]>` when first asked."""

    def __getattr__(name: str):
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import sys
        from importlib import import_module

        value = getattr(import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
