"""The docs a user reads stay true: a README that fits on a screen or two, links that lead somewhere,
the design the code cites, the CLI help they quote, and a configuration reference with every key."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6}) +(.*?) *#*$")
DESIGN_CITE = re.compile(r"docs/design\.md §(\d+)((?:, §\d+)*)")


def _help_tool():
    """docs/update_help.py: where the quoted help blocks are found and the real output made."""
    spec = importlib.util.spec_from_file_location("update_help", DOCS / "update_help.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HELP = _help_tool()


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks (a link or heading inside a fence is an example)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m[2])
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [
        target for line in prose(path.read_text(encoding="utf-8")) for target in LINK.findall(line)
    ]


def broken_links(path: Path) -> list[str]:
    """Each relative link of one Markdown file that leads nowhere: no such file, or no such heading."""
    bad = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    return bad


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def test_the_readme_fits_on_a_screen_or_two():
    lines = README.read_text(encoding="utf-8").split("\n")
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail to docs/"


def test_the_readme_keeps_the_quick_start_commands_ci_runs():
    """.ci/run takes the line two below the `ci:test` marker as the test command; the demo stays first."""
    lines = README.read_text(encoding="utf-8").split("\n")
    marker = lines.index("<!-- ci:test -->")
    assert lines[marker + 1] == "```sh"
    assert lines[marker + 2] == (
        "pip install -e '.[test]' && npm ci --prefix tests/contract --no-audit --no-fund "
        "&& python -m pytest"
    )
    assert "minutes" in lines[marker - 2], "the test command says how long it takes"
    assert "pip install . && memcurate demo --auto-approve" in lines[:marker]


def test_the_readme_says_plainly_who_pays_for_drafting():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "uses your Claude Code login" in text and "subscription" in text


@pytest.mark.parametrize("doc", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(doc):
    assert broken_links(doc) == []


def test_the_readme_links_to_every_page_of_the_docs():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in links(README)}
    pages = {p.resolve() for p in DOCS.rglob("*.md")}
    assert pages - linked == set()


def test_every_design_section_the_code_cites_has_its_heading():
    sections = {
        int(m[1])
        for line in prose((DOCS / "design.md").read_text(encoding="utf-8"))
        if (m := re.match(r"^## §(\d+)\. ", line))
    }
    cited: dict[int, list[str]] = {}
    stale = []
    for folder in ("curator", "hooks", "widgets"):
        for source in sorted((ROOT / folder).rglob("*.py")):
            text = source.read_text(encoding="utf-8")
            where = str(source.relative_to(ROOT))
            if "DESIGN §" in text:
                stale.append(where)
            for m in DESIGN_CITE.finditer(text):
                for n in (m[1], *re.findall(r"§(\d+)", m[2])):
                    cited.setdefault(int(n), []).append(where)
    assert stale == [], "cite docs/design.md §N: DESIGN.md is not in the repository"
    assert cited, "the code cites docs/design.md"
    assert {n: files for n, files in cited.items() if n not in sections} == {}


def test_the_help_quoted_in_the_docs_is_what_memcurate_prints():
    quoted = [
        (doc, command, "\n".join(lines[start:end]))
        for doc in markdown_files()
        for lines in [doc.read_text(encoding="utf-8").split("\n")]
        for command, start, end in HELP.help_blocks("\n".join(lines))
    ]
    assert quoted, "the docs quote some CLI help"
    for doc, command, text in quoted:
        assert text == HELP.real_help(command), (
            f"{doc.relative_to(ROOT)}: `{command}` prints something else now; run `python docs/update_help.py`"
        )


def test_the_configuration_reference_has_every_key_with_its_default():
    """Every leaf key of assets/config.default.yaml is in docs/configuration.md (a category's as
    `categories.<c>.key`, its own keys by their name)."""
    default = yaml.safe_load((ROOT / "assets" / "config.default.yaml").read_text(encoding="utf-8"))
    reference = (DOCS / "configuration.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z_<>.]+)`", reference))

    def leaves(d: dict, prefix: str = ""):
        for key, value in d.items():
            path = prefix + key
            if (
                isinstance(value, dict)
                and key not in ("speakers", "weights")
                and not prefix.endswith("activity.")
            ):
                yield from leaves(value, path + ".")
            else:
                yield path

    missing = []
    for path in leaves(default):
        parts = path.split(".")
        generic = ".".join(["categories", "<c>", *parts[2:]]) if parts[0] == "categories" else path
        if path not in documented and generic not in documented:
            missing.append(path)
    assert missing == []
