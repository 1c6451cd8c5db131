"""Which backend and models draft, and why (issue 10 §7, §8): the current model ids, the SDK's
deprecation table read without importing the SDK, and the one line `status` and the TUI show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from conftest import ANTHROPIC_SDK, ROOT, run_cli
from test_drafting import default_cfg, fake_claude

from memcurate.curator.drafting import choose, describe, get_drafter
from memcurate.curator.drafting import models as sdk_models


def claude_on_path(folder: Path) -> Path:
    """A `claude` executable in `folder` (test_drafting's fake); its path."""
    return fake_claude(folder) / "claude"


# -- the model ids -------------------------------------------------------------------------


@ANTHROPIC_SDK
def test_the_default_models_are_current_in_the_installed_sdk():
    """The shipped aliases map to ids the SDK lists and does not mark deprecated, the newest of their
    family (what a person who installs memcurate today should get)."""
    import anthropic
    from anthropic._data import DEPRECATED_MODELS

    listed = [a for arg in typing.get_args(anthropic.types.Model) for a in typing.get_args(arg)]
    assert listed, "the SDK's Model Literal could not be read"
    for alias, model_id in default_cfg()["models"].items():
        assert model_id in listed, f"{alias}: {model_id} is not a model the SDK knows"
        assert model_id not in DEPRECATED_MODELS, (
            f"{alias}: {model_id} is deprecated ({DEPRECATED_MODELS[model_id]})"
        )
        newest = next(
            m for m in listed if m.startswith(f"claude-{alias}-") and m not in DEPRECATED_MODELS
        )
        assert model_id == newest, f"{alias}: {model_id}, but the SDK's newest is {newest}"


@ANTHROPIC_SDK
def test_the_sdk_tables_read_as_text_match_the_imported_sdk():
    """What models.py reads from the SDK's source is what the SDK itself holds."""
    import anthropic
    from anthropic._data import DEPRECATED_MODELS

    listed = tuple(
        a for arg in typing.get_args(anthropic.types.Model) for a in typing.get_args(arg)
    )
    assert sdk_models.deprecated_models() == DEPRECATED_MODELS
    assert sdk_models.known_models() == listed
    assert sdk_models.newest_of_family("claude-sonnet-4-5") == default_cfg()["models"]["sonnet"]


def test_reading_the_tables_imports_no_sdk():
    code = (
        "import sys; from memcurate.curator.drafting import describe, models; "
        "assert models.deprecated_models() and models.known_models(); "
        "describe({'backend': 'auto', 'models': {'sonnet': 'claude-sonnet-4-5'}}, {'ANTHROPIC_API_KEY': 'k'}); "
        "print([m for m in ('anthropic', 'textual', 'rich') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "content",
    [
        None,  # no such file: an SDK that moved it
        "DEPRECATED_MODELS = load_table()\n",  # computed: not a literal
        "DEPRECATED_MODELS = ['claude-x']\n",  # not a mapping
        "DEPRECATED_MODELS: Dict[str, str] = {\n",  # not Python
    ],
)
def test_an_unexpected_sdk_layout_says_the_table_is_unavailable(tmp_path, content):
    sdk = tmp_path / "anthropic"
    (sdk / "_data").mkdir(parents=True)
    if content is not None:
        (sdk / "_data" / "deprecated_models.py").write_text(content)
    assert sdk_models.deprecated_models(str(sdk)) is None
    checked = sdk_models.check({"sonnet": "claude-sonnet-4-5"}, str(sdk))
    assert checked == {"warnings": [], "deprecation_table": sdk_models.UNAVAILABLE}
    assert "deprecation table unavailable" in checked["deprecation_table"]


def test_a_deprecated_configured_id_is_a_warning_naming_the_fix():
    checked = sdk_models.check(
        {"haiku": "claude-haiku-5-5", "sonnet": "claude-sonnet-4-5", "mine": "my-gateway-model"}
    )
    assert checked["deprecation_table"] == "available"
    [warning] = checked["warnings"]
    assert warning.startswith(
        "models.sonnet: claude-sonnet-4-5 is deprecated (end of life November 30th, 2026"
    )
    assert warning.endswith("map sonnet to claude-sonnet-5-5 in your config")
    assert sdk_models.check(default_cfg()["models"])["warnings"] == []


# -- the backend line ----------------------------------------------------------------------


def test_the_line_says_which_backend_and_models_and_why(tmp_path):
    cfg = default_cfg()
    empty = tmp_path / "empty"
    empty.mkdir()
    claude = claude_on_path(tmp_path / "bin")

    d = describe(cfg, {"PATH": f"{empty}{os.pathsep}{claude.parent}"})
    assert d.line == (
        f"drafting: claude-cli ({claude}) — backend: auto, no ANTHROPIC_API_KEY, claude on the PATH; "
        "models: decision/constraint sonnet, others haiku"
    )
    assert d.backend == "claude-cli" and d.available and d.executable == str(claude)

    d = describe(
        cfg,
        {
            "PATH": str(claude.parent),
            "ANTHROPIC_API_KEY": "k",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        },
    )
    assert d.line == (
        "drafting: anthropic — backend: auto, ANTHROPIC_API_KEY set, ANTHROPIC_BASE_URL set; "
        "models: decision/constraint sonnet (claude-sonnet-5-5), others haiku (claude-haiku-5-5)"
    )
    assert d.models["decision"] == {"alias": "sonnet", "id": "claude-sonnet-5-5"}

    d = describe(cfg, {"PATH": str(empty)})
    assert d.line.startswith(
        "drafting: offline — backend: auto, no ANTHROPIC_API_KEY, no claude on the PATH"
    )

    one_model = {
        **cfg,
        "categories": {c: {**v, "model": "opus"} for c, v in cfg["categories"].items()},
    }
    assert describe(one_model, {"PATH": str(claude.parent)}).line.endswith("; models: all opus")


@pytest.mark.parametrize(
    "backend, env, says",
    [
        ("anthropic", {}, "ANTHROPIC_API_KEY is not set"),
        ("claude-cli", {"ANTHROPIC_API_KEY": "k"}, "no `claude` executable is on the PATH"),
    ],
)
def test_an_unavailable_backend_is_said_in_the_line(tmp_path, backend, env, says):
    cfg = {**default_cfg(), "backend": backend}
    env = {"PATH": str(tmp_path), **env}
    d = describe(cfg, env)
    assert not d.available and says in d.unavailable
    assert d.line == f"drafting: UNAVAILABLE ({backend}) — {d.unavailable}"
    # the one chooser: get_drafter raises the same
    assert choose(cfg, env).unavailable == d.unavailable


def test_the_drafter_built_is_the_one_described(tmp_path):
    """get_drafter and describe share the chooser: the backend and the reason agree."""
    claude = claude_on_path(tmp_path / "bin")
    for env in ({"PATH": str(claude.parent)}, {"PATH": str(tmp_path)}):
        d, drafter = describe(default_cfg(), env), get_drafter(default_cfg(), env)
        assert drafter.name == d.backend and drafter.reason in d.line


# -- status and the TUI ------------------------------------------------------------------


def deprecated_project(project: Path) -> Path:
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: claude-cli\nmemory:\n  root: {project.parent / 'memory'}\nmodels:\n  sonnet: claude-sonnet-4-5\n"
    )
    return project


def test_status_shows_the_backend_line_and_warns_of_a_deprecated_model(project, tmp_path):
    deprecated_project(project)
    claude = claude_on_path(tmp_path / "bin")
    env = {"PATH": f"{claude.parent}{os.pathsep}{os.environ['PATH']}"}

    p = run_cli("status", "--json", cwd=project, env=env)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)["drafting"]
    assert (
        d["backend"] == "claude-cli"
        and d["configured"] == "claude-cli"
        and d["executable"] == str(claude)
    )
    assert d["line"].startswith(
        f"drafting: claude-cli ({claude}) — backend: claude-cli, claude on the PATH; models:"
    )
    assert len(d["warnings"]) == 1 and "claude-sonnet-4-5 is deprecated" in d["warnings"][0]

    text = run_cli("status", cwd=project, env=env).stdout
    assert f"drafting     claude-cli ({claude}) — backend: claude-cli" in text
    assert "  warning: models.sonnet: claude-sonnet-4-5 is deprecated" in text


def test_status_says_an_unavailable_backend(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: anthropic\n")
    p = run_cli("status", cwd=project)
    assert p.returncode == 0
    assert (
        "drafting     UNAVAILABLE (anthropic) — backend: anthropic, but ANTHROPIC_API_KEY is not set"
        in p.stdout
    )
    assert "warning" not in p.stdout  # the shipped models are current
