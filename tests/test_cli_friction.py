"""CLI friction a new user hits (issue 26): a pipe closed early, uninstall after an install that created
the settings file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from curator import install as installer


def _memcurate(*args: str, cwd, stdout) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from curator.cli import main; sys.exit(main())", *args], cwd=cwd, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=60)


def test_a_reader_that_leaves_early_gets_no_traceback_and_no_internal_error(tmp_path):
    (tmp_path / ".git").mkdir()
    read, write = os.pipe()
    os.close(read)  # `| head -1` that already left: every write to the pipe fails with EPIPE
    try:
        done = _memcurate("status", cwd=tmp_path, stdout=write)
    finally:
        os.close(write)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141  # as a Unix tool killed by SIGPIPE


def test_uninstall_after_an_install_that_created_the_file_says_it_removed_it(tmp_path):
    (tmp_path / ".git").mkdir()
    installer.install(tmp_path, "local")
    settings = tmp_path / ".claude" / "settings.local.json"
    assert settings.exists()
    done = _memcurate("uninstall", "--json", cwd=tmp_path, stdout=subprocess.PIPE)
    report = json.loads(done.stdout)
    assert not settings.exists()
    assert report["deleted"] is True and report["changed"] is True, report
    said = _memcurate("uninstall", cwd=tmp_path, stdout=subprocess.PIPE).stdout
    assert "nothing to remove" in said  # the second time only


def test_uninstall_in_words_says_the_file_went(tmp_path):
    (tmp_path / ".git").mkdir()
    installer.install(tmp_path, "local")
    said = _memcurate("uninstall", cwd=tmp_path, stdout=subprocess.PIPE).stdout
    assert "nothing to remove" not in said and "removed the file" in said, said
