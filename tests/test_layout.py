"""The dependency direction of DESIGN §2, read from the source (imports inside functions included,
which a runtime check of sys.modules would miss): widgets → curator and hooks → curator, never back;
the engine imports no UI; the hook path no UI and no model SDK; curator's modules form no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPOSITION_ROOT = "memcurate.curator.cli"  # the one engine module that hands hooks/ and widgets/ their work


def module_name(path: Path) -> str:
    parts = ["memcurate", *path.relative_to(ROOT).with_suffix("").parts]  # installed as memcurate.*
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth of its code, as absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import module`
    return found


def sources(top: str) -> dict[str, set[str]]:
    files = sorted((ROOT / top).rglob("*.py"))
    assert files, f"no sources under {top}/"
    return {module_name(p): imports(p) for p in files}


def tops(names: set[str]) -> set[str]:
    """The top-level packages named: memcurate's own by their folder (`memcurate.hooks.x` is `hooks`)."""
    return {n.split(".")[1] if n.startswith("memcurate.") else n.split(".")[0] for n in names}


def test_the_engine_imports_neither_hooks_nor_widgets_nor_a_ui():
    for mod, names in sources("curator").items():
        banned = {"textual", "rich"} | ({"hooks", "widgets"} if mod != COMPOSITION_ROOT else set())
        assert not tops(names) & banned, f"{mod} imports {sorted(tops(names) & banned)}"


def test_only_the_anthropic_backend_imports_the_sdk():
    for mod, names in sources("curator").items():
        if "anthropic" in tops(names):
            assert mod.startswith("memcurate.curator.drafting."), f"{mod} imports anthropic"


def test_the_hooks_import_no_ui_and_no_sdk():
    for mod, names in sources("hooks").items():
        banned = tops(names) & {"textual", "rich", "widgets", "anthropic", "yaml"}
        assert not banned, f"{mod} imports {sorted(banned)}"


def test_curator_modules_form_no_import_cycle():
    graph = sources("curator")
    known = set(graph)
    edges = {m: {n for n in names if n in known and n != m and not m.startswith(n + ".")} for m, names in graph.items()}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(n):] + [n]))
            if n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
