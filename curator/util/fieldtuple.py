"""Tuples whose items are also read by name, as collections.namedtuple makes them, without `collections`:
with `re` off the hook's path (util/lazyre.py) nothing else there loads it, ~3 ms of a hook that stages a
triage or counts a failure (and ~0.4 ms each namedtuple made, by exec).
"""

from __future__ import annotations


class FieldTuple(tuple):
    """A tuple with named items. A subclass annotates its items in order (its `_fields` are those names)
    and gives `__new__` its defaults; reading by name, `_asdict`, the repr, pickling, equality and hashing
    are namedtuple's."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        # its own annotations after its parent's items (a subclass of a subclass keeps them)
        cls._fields = cls._fields + tuple(cls.__dict__.get("__annotations__", ()))
        for i, name in enumerate(cls._fields):
            setattr(cls, name, property(_item(i), doc=f"Item {i}"))

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    def __repr__(self) -> str:
        items = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"{type(self).__name__}({items})"

    def _asdict(self) -> dict:
        return dict(zip(self._fields, self))


def _item(i: int):
    def get(self: tuple):
        return self[i]

    return get
