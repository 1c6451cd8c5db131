"""What the installed anthropic SDK says about model ids, read without importing it.

The SDK lists the current models (`anthropic.types.Model`, a Literal, newest of a family first) and
the deprecated ones with their end of life (`anthropic/_data/deprecated_models.py`,
`DEPRECATED_MODELS`). `import anthropic` costs ~3 s, and importing any of its submodules imports the
package, so both are read as source: the package is located with importlib's finder (which imports
nothing) and the assignment is evaluated with ast.literal_eval. A layout that is not what we expect
(no SDK, a moved file, a computed value) gives None: "deprecation table unavailable", never an error.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
from collections.abc import Mapping

UNAVAILABLE = "deprecation table unavailable (the anthropic SDK's deprecated_models.py was not found or not understood)"


def sdk_dir() -> str | None:
    """The installed anthropic package's folder, found without importing it."""
    try:
        spec = importlib.util.find_spec("anthropic")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return locations[0] if locations else None


def _assigned(path: str, name: str) -> ast.expr | None:
    """The expression assigned to `name` at the top level of the Python file `path`."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            return node.value
    return None


@functools.cache
def deprecated_models(sdk: str | None = None) -> dict[str, str] | None:
    """model id -> end of life ("November 30th, 2026"), as the SDK says; None when it cannot be read."""
    sdk = sdk or sdk_dir()
    node = (
        _assigned(os.path.join(sdk, "_data", "deprecated_models.py"), "DEPRECATED_MODELS")
        if sdk
        else None
    )
    try:
        table = ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        return None
    return table


@functools.cache
def known_models(sdk: str | None = None) -> tuple[str, ...] | None:
    """The ids of `anthropic.types.Model`'s Literal, in the SDK's order (newest of a family first)."""
    sdk = sdk or sdk_dir()
    node = _assigned(os.path.join(sdk, "types", "model.py"), "Model") if sdk else None
    if node is None:
        return None
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Subscript)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "Literal"
        ):
            items = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            ids = tuple(
                i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
            )
            return ids or None
    return None


def newest_of_family(model_id: str, sdk: str | None = None) -> str | None:
    """The SDK's first (newest) id of the family of `model_id` (claude-sonnet-4-5 -> claude-sonnet-5-5)
    that it does not mark deprecated."""
    parts = model_id.split("-")
    if len(parts) < 2 or parts[0] != "claude":
        return None
    prefix = f"claude-{parts[1]}-"
    gone = deprecated_models(sdk) or {}
    return next(
        (m for m in known_models(sdk) or () if m.startswith(prefix) and m not in gone), None
    )


def check(models: Mapping, sdk: str | None = None) -> dict:
    """The configured `models:` map against the SDK's deprecation table:
    {"warnings": [one line per deprecated id], "deprecation_table": "available" | UNAVAILABLE}."""
    table = deprecated_models(sdk)
    if table is None:
        return {"warnings": [], "deprecation_table": UNAVAILABLE}
    warnings = []
    for alias, model_id in models.items():
        end = table.get(str(model_id))
        if end is None:
            continue
        newer = newest_of_family(str(model_id), sdk)
        fix = f"map {alias} to {newer}" if newer else f"map {alias} to a current model"
        warnings.append(
            f"models.{alias}: {model_id} is deprecated (end of life {end}, says the anthropic SDK); "
            f"{fix} in your config"
        )
    return {"warnings": warnings, "deprecation_table": "available"}
