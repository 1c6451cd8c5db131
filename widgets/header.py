"""The app's title line: textual's Header drawn by one widget instead of four."""

from __future__ import annotations

from textual.widgets import Static


class TitleBar(Static):
    """The title and subtitle (App.format_title), centred, as textual's Header(show_clock=False, icon="") draws
    them: that Header is a container of an icon, the title and the clock's space, four widgets the first frame
    registers, styles, lays out and draws (about 10 ms of it); here the icon's 8 columns and the clock's 10 are
    this widget's padding. The header's clicks (the icon opens the command palette, ctrl+p here; the bar
    grows to three lines) are left out."""

    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        height: 1;
        padding: 0 10 0 8;
        background: $panel;
        color: $foreground;
        content-align: center middle;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def on_mount(self) -> None:
        app = self.app
        self.watch(app, "title", self._retitle)
        self.watch(app, "sub_title", self._retitle)

    def _retitle(self) -> None:
        app = self.app
        self.update(app.format_title(app.title, app.sub_title))
