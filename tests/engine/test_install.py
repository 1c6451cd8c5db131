"""`memcurate install / uninstall` (DESIGN §3): memcurate's hooks merged into Claude Code's settings
without losing a byte of anyone else's, and the plugin files at the repository root."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, memcurate_exe, run_cli

from memcurate import curator
from memcurate.curator import hook_entries
from memcurate.curator import install as setup

# Other keys, other hooks on the same events as memcurate's (with matchers), odd spacing and a number
# written the person's way: all of it must come back byte for byte.
SETTINGS = """{
  "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
  "env": {"FOO": "b\\u00e4r"},
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {"type": "command", "command": "~/bin/guard-bash", "timeout": 5}
        ]
      }
    ],
    "Notification": []
  },
  "cleanupPeriodDays": 3e1,
  "model": "opus"
}
"""
FAKE = "/opt/tools/bin/memcurate"


def settings(project: Path, scope: str = "local") -> Path:
    return Path(setup.settings_path(scope, project))


def put(path: Path, data: bytes | str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = data.encode() if isinstance(data, str) else data
    path.write_bytes(data)
    return data


def commands(doc: dict) -> dict[str, list[str]]:
    return {
        event: [h["command"] for g in groups for h in g["hooks"]]
        for event, groups in doc["hooks"].items()
    }


def test_install_adds_one_group_per_event_and_keeps_every_other_hook(project):
    put(settings(project), SETTINGS)
    report = setup.install(project, "local", entry=[FAKE])
    doc = json.loads(settings(project).read_text())
    assert report["changed"] and set(report["added"]) == set(hook_entries.EVENTS)
    for event, matcher, timeout in hook_entries.ENTRIES:
        mine = [
            g
            for g in doc["hooks"][event]
            if any(h["command"] == f"{FAKE} hook" for h in g["hooks"])
        ]
        assert mine == [
            {
                **({"matcher": matcher} if matcher else {}),
                "hooks": [{"type": "command", "command": f"{FAKE} hook", "timeout": timeout}],
            }
        ]
    before = json.loads(SETTINGS)
    assert doc["hooks"]["Stop"][0] == before["hooks"]["Stop"][0]
    assert doc["hooks"]["PreToolUse"][0] == before["hooks"]["PreToolUse"][0]
    assert doc["hooks"]["Notification"] == []
    assert [k for k in doc] == [k for k in before]  # key order kept
    text = settings(project).read_text()
    for untouched in (
        '"env": {"FOO": "b\\u00e4r"}',
        '"cleanupPeriodDays": 3e1',
        '"permissions": {"allow": ["Bash(npm test:*)"], "deny": []}',
    ):
        assert untouched in text  # not re-rendered: an escape, a number and a layout of theirs stay


def test_install_then_uninstall_gives_back_the_same_bytes(project):
    original = put(settings(project), SETTINGS)
    setup.install(project, "local", entry=[FAKE], review_auto_memory=True)
    report = setup.uninstall(project, "local")
    assert settings(project).read_bytes() == original
    assert report["restored"] and set(report["removed"]) == set(hook_entries.EVENTS)


def test_uninstall_after_another_change_removes_only_memcurates_entries_in_the_files_layout(
    project,
):
    original = put(settings(project), SETTINGS.replace("  ", "\t"))
    setup.install(project, "local", entry=[FAKE])
    changed = settings(project).read_text().replace('"model": "opus"', '"model": "sonnet"')
    settings(project).write_text(changed)  # the person (or Claude Code) changed something since
    report = setup.uninstall(project, "local")
    assert not report["restored"]
    assert settings(project).read_bytes() == original.replace(
        b'"model": "opus"', b'"model": "sonnet"'
    )


def test_install_twice_equals_once(project):
    put(settings(project), SETTINGS)
    setup.install(project, "local", entry=[FAKE])
    once = settings(project).read_bytes()
    backups = sorted(os.listdir(setup.backups_dir("local", project)))
    report = setup.install(project, "local", entry=[FAKE])
    assert settings(project).read_bytes() == once
    assert not report["changed"] and report["backup"] is None and not report["added"]
    assert sorted(os.listdir(setup.backups_dir("local", project))) == backups  # no write, no backup


def test_the_cli_says_already_installed(project):
    env = {"PATH": os.path.dirname(memcurate_exe()[0]) + os.pathsep + os.environ.get("PATH", "")}
    first = run_cli("install", "--project", str(project), cwd=project, env=env)
    assert first.returncode == 0, first.stderr
    once = settings(project).read_bytes()
    again = run_cli("install", "--project", str(project), cwd=project, env=env)
    assert again.returncode == 0 and "already installed" in again.stdout
    assert settings(project).read_bytes() == once


def test_a_reinstall_from_another_path_replaces_the_old_entries_where_they_stand(project):
    original = put(settings(project), SETTINGS)
    setup.install(project, "local", entry=["/old/venv/bin/memcurate"])
    report = setup.install(
        project,
        "local",
        entry=["/usr/bin/python3", "-m", "memcurate.curator.cli"],
        review_auto_memory=True,
    )
    doc = json.loads(settings(project).read_text())
    new = "/usr/bin/python3 -m memcurate.curator.cli hook --review-auto-memory"
    assert commands(doc)["Stop"] == ["notify-send done", new]
    assert commands(doc)["PreToolUse"] == ["~/bin/guard-bash", new]
    assert all(
        cmds.count(new) == 1 for e, cmds in commands(doc).items() if e in hook_entries.EVENTS
    )
    assert not any("/old/venv" in c for cmds in commands(doc).values() for c in cmds)
    assert set(report["updated"]) == set(hook_entries.EVENTS) and not report["added"]
    setup.uninstall(project, "local")  # the reinstall kept the bytes from before the first install
    assert settings(project).read_bytes() == original


def test_a_reinstall_keeps_memcurates_group_where_it_stands(project):
    put(settings(project), SETTINGS)
    setup.install(project, "local", entry=["/old/venv/bin/memcurate"])
    doc = json.loads(settings(project).read_text())
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "added-later"}]})
    settings(project).write_text(json.dumps(doc, indent=2))
    setup.install(project, "local", entry=[FAKE])
    assert commands(json.loads(settings(project).read_text()))["Stop"] == [
        "notify-send done",
        f"{FAKE} hook",
        "added-later",
    ]


def test_memcurate_hooks_sharing_a_group_with_others_are_taken_out_of_it(project):
    doc = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "say hi"},
                        {"type": "command", "command": "/x/memcurate hook", "timeout": 30},
                    ]
                }
            ]
        }
    }
    original = put(settings(project), json.dumps(doc, indent=2))
    setup.install(project, "local", entry=[FAKE])
    assert commands(json.loads(settings(project).read_text()))["Stop"] == ["say hi", f"{FAKE} hook"]
    # the older entry was there before install: it comes back, where it was
    setup.uninstall(project, "local")
    assert settings(project).read_bytes() == original


BAD = {
    "invalid JSON": (b'{\n  "model": "opus",\n  "hooks": {\n}\n', r":5:1: invalid JSON"),
    "trailing comma": (b'{"model": "opus",}', r":1:18: invalid JSON"),
    "byte order mark": (b'\xef\xbb\xbf{"model": "opus"}', "byte order mark"),
    "not UTF-8": (b'{"model": "\xff"}', "not UTF-8"),
    "top level a list": (b"[1, 2]", "top level is a list, not an object"),
    "hooks a list": (b'{"hooks": []}', '"hooks" is a list, not an object'),
    "event not a list": (
        b'{"hooks": {"Stop": {"hooks": []}}}',
        "hooks.Stop is an object, not a list",
    ),
    "group without hooks": (
        b'{"hooks": {"Stop": [{"matcher": ""}]}}',
        r'hooks.Stop\[0\] has no "hooks" list',
    ),
    "group not an object": (
        b'{"hooks": {"Stop": ["memcurate hook"]}}',
        r'hooks.Stop\[0\] has no "hooks" list',
    ),
    "duplicate key": (b'{"hooks": {"Stop": [], "Stop": []}}', "'Stop' appears twice"),
}


@pytest.mark.parametrize("case", BAD)
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_file_memcurate_cannot_read_is_refused_and_left_as_it_was(project, case, action):
    data, why = BAD[case]
    path = settings(project)
    put(path, data)
    if action == "uninstall" and case == "duplicate key":
        data = put(
            path,
            b'{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "memcurate hook"}]}], '
            b'"Stop": [{"hooks": [{"type": "command", "command": "memcurate hook"}]}]}}',
        )
    with pytest.raises(setup.InstallError, match=why) as e:
        getattr(setup, action)(
            project, "local", **({"entry": [FAKE]} if action == "install" else {})
        )
    assert str(path) in str(e.value)
    assert path.read_bytes() == data
    backups = Path(setup.backups_dir("local", project))
    assert not list(backups.glob("*.bak"))


def test_the_cli_refuses_with_one_line_and_exit_1(project):
    path = settings(project, "project")
    data = put(path, b'{\n  "model": "opus"\n  "x": 1\n}\n')
    res = run_cli("install", "--scope", "project", "--project", str(project), cwd=project)
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and f"{path}:3:3: invalid JSON" in res.stderr
    assert path.read_bytes() == data


def test_every_change_keeps_a_backup_of_the_previous_bytes_readable_by_its_owner_only(project):
    original = put(settings(project), SETTINGS)
    first = setup.install(project, "local", entry=[FAKE])
    installed = settings(project).read_bytes()
    second = setup.uninstall(project, "local")
    assert Path(first["backup"]).read_bytes() == original
    assert Path(second["backup"]).read_bytes() == installed
    assert first["backup"] != second["backup"]
    assert Path(first["backup"]).parent == project / ".memcurate" / "backups"
    assert stat.S_IMODE(os.stat(first["backup"]).st_mode) == 0o600


def test_user_scope_writes_claude_config_dir_settings_and_backs_up_in_the_state_dir(
    project, isolated_home
):
    path = isolated_home / ".claude" / "settings.json"
    put(path, '{"model": "opus"}\n')
    report = setup.install(project, "user", entry=[FAKE])
    assert report["settings"] == str(path) and "hooks" in json.loads(path.read_text())
    assert (
        Path(report["backup"]).parent
        == isolated_home / ".local" / "state" / "memcurate" / "backups"
    )
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(
    "scope, rel", [("local", ".claude/settings.local.json"), ("project", ".claude/settings.json")]
)
def test_project_scopes_write_their_own_file(project, scope, rel):
    report = setup.install(project, scope, entry=[FAKE])
    assert report["settings"] == str(project / rel) and report["created"]
    assert (project / rel).is_file()
    others = {".claude/settings.local.json", ".claude/settings.json"} - {rel}
    assert not any((project / o).exists() for o in others)
    assert not (Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json").exists()


def test_project_scope_says_the_shared_file_holds_this_machines_path(project):
    res = run_cli("install", "--scope", "project", "--project", str(project), cwd=project)
    assert res.returncode == 0, res.stderr
    note = [line for line in res.stderr.splitlines() if "note:" in line]
    assert len(note) == 1 and "shared" in note[0] and "--scope local" in note[0]


def test_a_file_install_created_goes_with_uninstall(project):
    setup.install(project, "local", entry=[FAKE])
    assert settings(project).exists()
    report = setup.uninstall(project, "local")
    assert not settings(project).exists() and report["deleted"]
    assert (project / ".claude").is_dir()  # the folder may hold the person's other files: it stays


def test_an_empty_hooks_object_left_by_uninstall_goes_but_the_file_stays_when_it_holds_more(
    project,
):
    setup.install(project, "local", entry=[FAKE])
    doc = json.loads(settings(project).read_text())
    doc["model"] = "haiku"  # added after install: the file is no longer install's alone
    settings(project).write_text(json.dumps(doc, indent=2) + "\n")
    setup.uninstall(project, "local")
    assert json.loads(settings(project).read_text()) == {"model": "haiku"}


def test_a_symlinked_settings_file_stays_a_symlink(project, tmp_path):
    target = tmp_path / "dotfiles" / "claude-settings.json"
    original = put(target, SETTINGS)
    link = settings(project)
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    report = setup.install(project, "local", entry=[FAKE])
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "hooks" in json.loads(target.read_text()) and report["target"] == str(target)
    assert f"{FAKE} hook" in target.read_text()
    setup.uninstall(project, "local")
    assert link.is_symlink() and target.read_bytes() == original


def test_a_symlink_to_a_missing_file_is_refused(project, tmp_path):
    link = settings(project)
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(setup.InstallError, match="link to a missing file"):
        setup.install(project, "local", entry=[FAKE])
    assert not (tmp_path / "nowhere.json").exists() and link.is_symlink()


def test_the_files_permission_bits_are_kept(project):
    path = settings(project)
    put(path, SETTINGS)
    path.chmod(0o600)  # it holds an env block: the person keeps it private
    setup.install(project, "local", entry=[FAKE])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    setup.uninstall(project, "local")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_change_made_while_memcurate_writes_is_kept(project, monkeypatch):
    """Claude Code rewrites the file between memcurate's read and its rename: the rename does not
    go over a file it has not read; the change is merged."""
    path = settings(project)
    put(path, SETTINGS)
    real = setup._render
    calls = []

    def meanwhile(p, data, doc):
        calls.append(data)
        if len(calls) == 1:  # another writer replaces the file (a new inode), once
            tmp = path.with_name("other.tmp")
            tmp.write_text(data.decode().replace('"model": "opus"', '"model": "sonnet"'))
            os.replace(tmp, path)
        return real(p, data, doc)

    monkeypatch.setattr(setup, "_render", meanwhile)
    setup.install(project, "local", entry=[FAKE])
    doc = json.loads(path.read_text())
    assert len(calls) == 2 and doc["model"] == "sonnet" and f"{FAKE} hook" in commands(doc)["Stop"]


def test_two_installs_at_once_leave_one_valid_file(project):
    put(settings(project), SETTINGS)
    procs = [
        subprocess.Popen(
            memcurate_exe() + ["install", "--project", str(project)] + flag,
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for flag in ([], ["--review-auto-memory"], [], ["--review-auto-memory"])
    ]
    codes = [p.wait(timeout=120) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert codes == [0, 0, 0, 0]
    doc = json.loads(settings(project).read_text())
    found = setup.ours(doc)
    assert set(found) == set(hook_entries.EVENTS) and all(len(v) == 1 for v in found.values())
    assert commands(doc)["Stop"][0] == "notify-send done"


def test_uninstall_when_nothing_is_installed_says_so(project):
    original = put(settings(project), SETTINGS)
    res = run_cli("uninstall", "--project", str(project), cwd=project)
    assert res.returncode == 0 and "not installed" in res.stdout
    assert settings(project).read_bytes() == original
    res = run_cli("uninstall", "--scope", "user", "--json", "--project", str(project), cwd=project)
    doc = json.loads(res.stdout)
    assert res.returncode == 0 and doc["changed"] is False and doc["removed"] == []


def test_json_output_is_one_document(project):
    res = run_cli(
        "install", "--json", "--review-auto-memory", "--project", str(project), cwd=project
    )
    doc = json.loads(res.stdout)
    assert doc["action"] == "install" and doc["scope"] == "local" and doc["review_auto_memory"]
    assert doc["command"].endswith(" hook --review-auto-memory") and set(doc["added"]) == set(
        hook_entries.EVENTS
    )


def test_status_says_where_the_hooks_are_installed_and_with_review_mode(project):
    setup.install(project, "user", entry=[FAKE], review_auto_memory=True)
    put(settings(project, "project"), '{"enabledPlugins": {"memcurate@memcurate": true}}')
    res = run_cli("status", "--json", "--project", str(project), cwd=project)
    found = json.loads(res.stdout)["hooks_installed"]
    assert {
        "scope": "user",
        "settings": setup.settings_path("user", project),
        "events": list(hook_entries.EVENTS),
        "review_auto_memory": True,
        "executables": [FAKE],
        "outdated": False,
    } in found
    assert {
        "scope": "project",
        "settings": str(settings(project, "project")),
        "plugin": "memcurate@memcurate",
    } in found
    text = run_cli("status", "--project", str(project), cwd=project).stdout
    assert re.search(
        r"^hooks +project: .*settings.json: plugin memcurate@memcurate enabled$", text, re.M
    )
    assert re.search(r"^ +user: .*settings.json \(8 events, review mode\)$", text, re.M)


# -- the command that is written runs ---------------------------------------------------------------


def _run_written(project: Path, event: str, **payload) -> subprocess.CompletedProcess:
    doc = json.loads(settings(project).read_text())
    command = doc["hooks"][event][-1]["hooks"][0]["command"]
    stdin = json.dumps(
        {"hook_event_name": event, "session_id": "s1", "cwd": str(project), **payload}
    )
    return subprocess.run(
        command,
        shell=True,
        input=stdin,
        text=True,
        capture_output=True,
        cwd=project,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
        timeout=60,
    )


def test_the_command_installed_by_the_console_script_runs_its_interpreter(project, tmp_path):
    script = memcurate_exe()
    if len(script) != 1:
        pytest.skip("no memcurate console script beside this interpreter")
    python = Path(script[0]).read_text().splitlines()[0].removeprefix("#!")
    res = subprocess.run(
        script + ["install", "--review-auto-memory"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(settings(project).read_text())
    # the interpreter the console script starts, running the CLI without pip's wrapper
    assert commands(doc)["Stop"] == [
        shlex.join([python, "-P", "-c", hook_entries.RUN_CLI, "hook", "--review-auto-memory"])
    ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    ran = _run_written(project, "Stop", transcript_path=str(transcript))
    assert ran.returncode == 0 and ran.stdout == "", ran.stderr
    log = project / ".memcurate" / "log" / "memcurate.log"
    assert log.is_file()
    lines = log.read_text().count("\n")
    ran = _run_written(project, "PostToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert ran.returncode == 0 and ran.stdout == "" and ran.stderr == ""
    assert log.read_text().count("\n") == lines  # fires on every Bash call: not a line in the log


def test_the_module_fallback_command_runs(project):
    setup.install(project, "local", entry=[sys.executable, "-m", "memcurate.curator.cli"])
    ran = _run_written(project, "SessionEnd")
    assert ran.returncode == 0 and ran.stdout == "", ran.stderr


# -- finding the entry point ----------------------------------------------------------------------


def _script(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_entry_point_is_this_interpreter_links_kept(tmp_path):
    base = _script(tmp_path / "python3.11")
    venv_python = tmp_path / "pipx" / "venvs" / "memcurate" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(base)  # a venv's python: a link, through which its packages are found
    assert setup.entry_point(executable=str(venv_python)) == [
        str(venv_python),
        "-P",
        "-c",
        hook_entries.RUN_CLI,
    ]


def test_without_an_interpreter_the_entry_point_is_the_console_script_then_the_path(tmp_path):
    none = str(tmp_path / "no" / "python")
    real = _script(tmp_path / "pipx" / "venvs" / "memcurate" / "bin" / "memcurate")
    link = tmp_path / "local" / "bin" / "memcurate"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)  # pipx's ~/.local/bin/memcurate: a link that survives upgrades
    assert setup.entry_point(str(link), which=lambda name: None, executable=none) == [str(link)]
    on_path = _script(tmp_path / "bin" / "memcurate")
    assert setup.entry_point(
        "/usr/lib/python3/pytest", which=lambda name: str(on_path), executable=none
    ) == [str(on_path)]
    not_executable = tmp_path / "other" / "memcurate"
    _script(not_executable).chmod(0o644)
    assert setup.entry_point(str(not_executable), which=lambda name: None, executable=none) == [
        none,
        "-m",
        "memcurate.curator.cli",
    ]


def test_a_path_with_spaces_is_quoted_for_the_shell():
    command = hook_entries.command_for(["/home/me/My Tools/memcurate"], True)
    assert command == "'/home/me/My Tools/memcurate' hook --review-auto-memory"
    assert hook_entries.parse_command(command) == {
        "executable": "/home/me/My Tools/memcurate",
        "review_auto_memory": True,
        "outdated": False,
    }


@pytest.mark.parametrize(
    "command, mine",
    [
        ("memcurate hook", True),
        ("/a/b/memcurate hook --review-auto-memory", True),
        ("'/my venv/bin/python' -P -c 'from memcurate.curator.cli import main; main()' hook", True),
        ("python -P -c 'import os; main()' hook", False),
        ("python -P -c 'from memcurate.curator.cli import main; main()' status", False),
        ("/usr/bin/python3 -m memcurate.curator.cli hook", True),
        ("memcurate status", False),
        ("my-memcurate hook", False),
        ("echo memcurate hook", False),
        ("memcurate-hook", False),
        ("'unclosed", False),
    ],
)
def test_memcurates_entries_are_told_by_their_command(command, mine):
    assert (hook_entries.parse_command(command) is not None) is mine


# -- the plugin -----------------------------------------------------------------------------------


def test_the_plugins_hooks_json_is_the_table():
    text = (ROOT / "hooks" / "hooks.json").read_text()
    assert text == hook_entries.render_plugin_hooks(), (
        "regenerate: python -m memcurate.curator.hook_entries > hooks/hooks.json"
    )
    doc = json.loads(text)
    assert set(doc["hooks"]) == set(hook_entries.EVENTS)
    assert all(
        h["command"] == "memcurate hook"
        for g in doc["hooks"].values()
        for grp in g
        for h in grp["hooks"]
    )


def test_the_plugin_manifest_names_this_version():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "memcurate" and manifest["version"] == curator.__version__
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", manifest["name"])
    assert isinstance(manifest["author"], dict) and manifest["author"]["name"]
    assert manifest["description"]
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert market["owner"]["name"] and [p["name"] for p in market["plugins"]] == ["memcurate"]
    assert market["plugins"][0]["source"] == "./"


def test_the_slash_command_lists_what_waits_for_review():
    text = (ROOT / "skills" / "memcurate" / "SKILL.md").read_text()
    front, body = re.fullmatch(r"---\n(.*?)\n---\n(.*)", text, re.S).groups()
    fields = dict(line.split(": ", 1) for line in front.splitlines())
    assert fields["allowed-tools"] == "Bash(memcurate list *)" and fields["description"]
    assert "!`memcurate list`" in body


# -- the record of an install: outside the data dir, a backup given back only when it is the one saved ------


def _user_record(project: Path) -> Path:
    [record] = (Path(os.environ["XDG_STATE_HOME"]) / "memcurate" / "installs").glob("*.json")
    return record


def test_the_record_of_an_install_is_kept_outside_the_data_dir(project):
    put(settings(project), SETTINGS)
    setup.install(project, "local", entry=[FAKE])
    assert not list(project.glob(".memcurate/**/installed.json"))
    record = json.loads(_user_record(project).read_text())
    assert record["target"] == str(settings(project)) and len(record["before"]) == 64


def test_a_backup_changed_in_the_data_dir_brings_back_no_hook(project):
    """Claude can write `.memcurate/`: a backup (and an older memcurate's record) it forged there must not
    make uninstall put back a hook command no one installed."""
    original = put(settings(project), SETTINGS)
    report = setup.install(project, "local", entry=[FAKE])
    forged = json.loads(SETTINGS)
    forged["hooks"]["Stop"].append(
        {"hooks": [{"type": "command", "command": "bash -m memcurate.curator.cli hook"}]}
    )
    Path(report["backup"]).write_text(json.dumps(forged, indent=2))
    installed = hashlib.sha256(settings(project).read_bytes()).hexdigest()
    (Path(report["backup"]).parent / "installed.json").write_text(
        json.dumps({str(settings(project)): {"after": installed, "before": report["backup"]}})
    )
    out = setup.uninstall(project, "local")
    assert "memcurate.curator.cli" not in settings(project).read_text()
    assert json.loads(settings(project).read_bytes()) == json.loads(original)
    assert not out["restored"] and any("gone or changed" in n for n in out["notes"])


def test_an_older_memcurates_record_in_the_data_dir_still_gives_the_bytes_back(project):
    original = put(settings(project), SETTINGS.replace("  ", "\t"))
    report = setup.install(project, "local", entry=[FAKE])
    record = _user_record(project)
    installed = json.loads(record.read_text())["after"]
    record.unlink()  # as an older memcurate left it: its record in the backups dir
    (Path(report["backup"]).parent / "installed.json").write_text(
        json.dumps({str(settings(project)): {"after": installed, "before": report["backup"]}})
    )
    assert setup.uninstall(project, "local")["restored"]
    assert settings(project).read_bytes() == original
    assert json.loads((Path(report["backup"]).parent / "installed.json").read_text()) == {}


def test_status_says_an_older_install_s_hooks_need_installing_again(project):
    """An install made before the code moved under the `memcurate` package ran `-m curator.cli hook`,
    which fails now: status says so and how to fix it, and installing again replaces it in place."""
    path = settings(project, "local")
    old = "/usr/bin/python3 -m curator.cli hook"
    put(path, json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": old}]}]}}))
    res = run_cli("status", "--project", str(project), cwd=project)
    assert (
        "written by an older memcurate" in res.stdout
        and "memcurate install --scope local" in res.stdout
    )
    [found] = [f for f in setup.installed(project) if f["scope"] == "local"]
    assert found["outdated"] is True
    setup.install(project, "local", entry=[FAKE])
    [found] = [f for f in setup.installed(project) if f["scope"] == "local"]
    assert found["outdated"] is False and old not in path.read_text()
