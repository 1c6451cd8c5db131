"""Packaging: the wheel carries the assets where an installed copy finds them, under one import package."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT


def test_wheel_carries_assets_and_finds_them(tmp_path):
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next(out.glob("memcurate-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "curator/_assets/config.default.yaml",
        "curator/_assets/demo/session.jsonl",
        "hooks/hooks.json",
        "curator/cli.py",
        "widgets/__init__.py",
        "widgets/app.tcss",
    ):
        assert f"memcurate/{needed}" in names, needed
    # memcurate claims one top-level import name: `curator` is elasticsearch-curator's, `hooks` and
    # `widgets` anyone's
    assert {n.split("/")[0] for n in names} == {
        "memcurate",
        wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info",
    }

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from memcurate.curator.util.assets import assets_dir; "
        "from memcurate.curator import config; print(assets_dir()); print(config.load(sys.argv[2])['backend'])"
    )
    # -I: isolated from the checkout and its editable install
    res = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(site), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    found, backend = res.stdout.split()
    assert found == str(site / "memcurate" / "curator" / "_assets")
    assert backend == "auto"
    # the installed TUI finds its stylesheet beside its module (a missing one stops `memcurate` at start)
    probe = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); import memcurate.widgets.app as a; "
        "print(os.path.isfile(os.path.join(os.path.dirname(a.__file__), a.MemcurateApp.CSS_PATH)), a.__file__)"
    )
    res = subprocess.run(
        [sys.executable, "-I", "-c", probe, str(site)], capture_output=True, text=True, check=True
    )
    exists, where = res.stdout.split()
    assert exists == "True" and where.startswith(str(site))


def test_an_editable_install_claims_no_generic_name(tmp_path):
    """The dev install (the README's test command) exposes `memcurate.curator` from the checkout, and no
    `curator`, `hooks` or `widgets` outside a checkout's own folder."""
    code = (
        "import importlib.util as u, memcurate.curator.cli as c; "
        "print(c.__file__); print([n for n in ('curator', 'hooks', 'widgets') if u.find_spec(n)])"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    where, leaked = res.stdout.splitlines()
    assert Path(where).resolve() == ROOT / "curator" / "cli.py"
    assert leaked == "[]"
