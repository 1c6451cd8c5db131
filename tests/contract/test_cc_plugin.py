"""Contract: memcurate as a Claude Code plugin (.claude-plugin/, hooks/hooks.json, skills/) in the real client:
the plugin loads, its hooks run `memcurate hook`, and its skill is the namespaced `/memcurate:memcurate`
whose `memcurate list` output reaches the model."""

from __future__ import annotations

import shutil
from pathlib import Path

from contract.api import ToolUse, Turn

ROOT = Path(__file__).resolve().parents[2]


def plugin_dir(tmp_path: Path) -> Path:
    """The repository's plugin files as a plugin folder (what `/plugin install` copies)."""
    out = tmp_path / "plugin"
    for part in (".claude-plugin", "hooks/hooks.json", "skills"):
        src, dst = ROOT / part, out / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dst)
    return out


def test_the_plugin_loads_and_its_hooks_and_skill_work(cproject, run_claude, tmp_path):
    plugin = plugin_dir(tmp_path)
    run = run_claude(
        "/memcurate:memcurate",
        [Turn("Here is the list.")],
        cwd=cproject,
        args=("--plugin-dir", str(plugin)),
    )
    assert run.returncode == 0, run.explain()
    init = next(
        (e for e in run.events if e.get("type") == "system" and e.get("subtype") == "init"), {}
    )
    names = [p.get("name") if isinstance(p, dict) else p for p in init.get("plugins", [])]
    assert "memcurate" in names, f"the plugin did not load: plugins {init.get('plugins')}"
    assert "memcurate:memcurate" in init.get("slash_commands", []), (
        f"no namespaced skill /memcurate:memcurate: {init.get('slash_commands')}"
    )
    fired = {h.event for h in run.hooks}
    assert {"UserPromptSubmit", "Stop", "SessionEnd"} <= fired, (
        f"the plugin's hooks did not run: {fired}"
    )
    assert all(h.rc == 0 for h in run.hooks), [(h.event, h.rc, h.stderr) for h in run.hooks if h.rc]
    first = run.api.conversation[0].text
    assert "nothing waits for review" in first, (
        "the skill's `memcurate list` output did not reach the model:\n" + first[-2000:]
    )


def test_the_plugins_guard_denies_a_write_into_memcurates_folders(cproject, run_claude, tmp_path):
    from contract.test_cc_guard import auto_memory

    plugin = plugin_dir(tmp_path)
    target = auto_memory(cproject) / "decision" / "forged.md"
    script = [
        Turn(
            "Saving.",
            [ToolUse("Write", {"file_path": str(target), "content": "---\nid: forged\n---\n"})],
        ),
        Turn("Done."),
    ]
    run = run_claude(
        "Save a decision memory.", script, cwd=cproject, args=("--plugin-dir", str(plugin))
    )
    assert run.returncode == 0, run.explain()
    assert not target.exists(), (
        "the plugin's guard let Claude write into memcurate's decision folder"
    )
    result = run.api.conversation[1].text
    assert "is_error" in result and "memcurate" in result, result[-1500:]
