"""Where the bundled data files (assets/) are, in a checkout and in a wheel."""

from __future__ import annotations

import os

_MARKER = "config.default.yaml"
_found: str | None = None


def assets_dir() -> str:
    global _found
    if _found is None:
        # the curator package (dev/ links to it)
        here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
        # A wheel carries assets inside the package (pyproject's force-include);
        # a checkout or an editable install has them beside the package.
        candidates = (os.path.join(here, "_assets"), os.path.join(os.path.dirname(here), "assets"))
        for c in candidates:
            if os.path.isfile(os.path.join(c, _MARKER)):
                _found = c
                break
        else:
            raise FileNotFoundError(
                f"memcurate's assets folder is missing (looked in {' and '.join(candidates)})"
            )
    return _found


def asset(name: str) -> str:
    return os.path.join(assets_dir(), name)
