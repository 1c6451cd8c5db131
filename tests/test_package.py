"""Packaging: the wheel carries the assets where an installed copy finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from conftest import ROOT


def test_wheel_carries_assets_and_finds_them(tmp_path):
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    wheel = next(out.glob("memcurate-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("curator/_assets/config.default.yaml", "curator/_assets/demo/session.jsonl",
                   "hooks/hooks.json", "curator/cli.py", "widgets/__init__.py", "widgets/app.tcss"):
        assert needed in names, needed
    assert not any(n.startswith(("tests/", "bench/")) for n in names)

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from curator.util.assets import assets_dir; "
             "from curator import config; print(assets_dir()); print(config.load(sys.argv[2])['backend'])")
    # -I: isolated from the checkout and its editable install
    res = subprocess.run([sys.executable, "-I", "-c", probe, str(site), str(tmp_path)], capture_output=True,
                         text=True, check=True)
    found, backend = res.stdout.split()
    assert found == str(site / "curator" / "_assets")
    assert backend == "auto"
    # the installed TUI finds its stylesheet beside its module (a missing one stops `memcurate` at start)
    probe = ("import os, sys; sys.path.insert(0, sys.argv[1]); import widgets.app as a; "
             "print(os.path.isfile(os.path.join(os.path.dirname(a.__file__), a.MemcurateApp.CSS_PATH)), a.__file__)")
    res = subprocess.run([sys.executable, "-I", "-c", probe, str(site)], capture_output=True, text=True, check=True)
    exists, where = res.stdout.split()
    assert exists == "True" and where.startswith(str(site))
