"""The dependency direction of docs/design.md §2, read from the source (imports inside functions included,
which a runtime check of sys.modules would miss): widgets → curator and hooks → curator, never back;
the engine imports no UI; the hook path no UI and no model SDK; curator's modules form no cycle; and
every package imports only from the layers below its own (the layers block of docs/architecture.md)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the one engine module that hands hooks/ and widgets/ their work
COMPOSITION_ROOT = "memcurate.curator.cli"


def module_name(path: Path) -> str:
    parts = ["memcurate", *path.relative_to(ROOT).with_suffix("").parts]  # installed as memcurate.*
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# cached: the tests below walk the same files again and again (each engine test's imports, each layer)
@functools.cache
def imports(path: Path) -> frozenset[str]:
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
    return frozenset(found)


def sources(top: str) -> dict[str, frozenset[str]]:
    files = sorted((ROOT / top).rglob("*.py"))
    assert files, f"no sources under {top}/"
    return {module_name(p): imports(p) for p in files}


def tops(names: frozenset[str] | set[str]) -> set[str]:
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
    edges = {
        m: {n for n in names if n in known and n != m and not m.startswith(n + ".")}
        for m, names in graph.items()
    }
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(n) :] + [n]))
            if n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def layers() -> list[set[str]]:
    """The layers block of docs/architecture.md, top first: each layer's packages."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layers: top first -->\n```\n(.*?)```", doc, re.S)
    assert block, "docs/architecture.md has no layers block"
    return [
        {n.strip() for n in re.split(r"\s{2,}", line.strip())[0].split(",")}
        for line in block.group(1).splitlines()
        if line.strip()
    ]


def unit(module: str) -> str | None:
    """The layered unit a module belongs to: hooks, widgets, or curator's sub-package or top-level module."""
    parts = module.split(".")
    if parts[0] != "memcurate" or len(parts) < 3 or parts[1] not in ("curator", "hooks", "widgets"):
        return None
    return parts[2] if parts[1] == "curator" else parts[1]


def test_every_package_imports_only_from_the_layers_below_it():
    placed = [name for layer in layers() for name in layer]
    assert len(placed) == len(set(placed)), f"a package placed twice: {sorted(placed)}"
    rank = {name: i for i, layer in enumerate(layers()) for name in layer}
    graph = {**sources("curator"), **sources("hooks"), **sources("widgets")}
    units = {u for m in graph if (u := unit(m)) and m != "memcurate.curator"}
    assert not units - set(rank), (
        f"docs/architecture.md's layers do not place {sorted(units - set(rank))}"
    )
    wrong = []
    for mod, names in sorted(graph.items()):
        here = unit(mod)
        if here is None:
            continue
        for name in sorted(names):
            there = unit(name)
            if there in rank and there != here and rank[there] <= rank[here]:
                wrong.append(f"{mod} imports {name} ({there} is not below {here})")
    assert not wrong, "imports that go sideways or up:\n" + "\n".join(wrong)


def test_the_engine_tests_run_no_textual():
    """tests/engine/ is the layer that runs without Textual: none of its modules imports textual or the
    widgets, directly or through a shared test module (tests/*.py, another layer's test module)."""
    tests = ROOT / "tests"
    local = {p.stem: p for p in sorted(tests.glob("*.py")) + sorted(tests.glob("*/*.py"))}
    ui = {"textual", "widgets"}
    engine_tests = sorted((tests / "engine").glob("*.py"))
    assert engine_tests
    for start in engine_tests:
        seen, todo = {start.stem}, [start]
        while todo:
            path = todo.pop()
            names = imports(path) if path.is_relative_to(ROOT / "tests") else set()
            names = {n for n in names if n}  # `from . import x` in a test module
            bad = tops(names) & ui
            assert not bad, f"{start.name} imports {sorted(bad)} through {path.name}"
            for name in names:
                head = name.split(".")[0]
                if head in local and head not in seen:
                    seen.add(head)
                    todo.append(local[head])
