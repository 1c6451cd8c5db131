"""Editing a text in the person's $EDITOR: the terminal handed over (the app suspended) and taken back."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile

from textual.app import App, SuspendNotSupported


def edit_externally(app: App, text: str, editor: str | None = None) -> str | None:
    """`text` as the person left it in `editor` (else $VISUAL, $EDITOR, vi); None when nothing is to be saved:
    the editor failed or could not run (said in a notification) or exited non-zero. Runs on the app's thread."""
    editor = editor or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, path = tempfile.mkstemp(prefix="memcurate-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        with app.suspend():
            code = subprocess.call([*shlex.split(editor), path])
        with open(path, encoding="utf-8") as f:
            edited = f.read()
    except SuspendNotSupported:  # no terminal to hand over (Textual Web, a headless driver)
        app.notify(
            "cannot hand the terminal to an editor here: press e to edit in the app",
            severity="error",
            markup=False,
        )
        return None
    except (OSError, ValueError) as e:  # not found, $EDITOR with an unclosed quote, text not UTF-8
        app.notify(f"could not run {editor}: {e}", severity="error", markup=False)
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    if code != 0:
        app.notify(
            f"{editor} exited with {code}: nothing changed", severity="warning", markup=False
        )
        return None
    return edited
