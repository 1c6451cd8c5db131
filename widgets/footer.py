"""A Footer that lets go of the keys it replaces."""

from __future__ import annotations

from textual.widgets import Footer

NARROW = 120  # columns below which a screen's layout gives way and its footer drops what help still lists


class TidyFooter(Footer):
    """textual 8.2.8's Footer binds every key it composes to its own `compact` reactive; the
    watchers (and through them every replaced key) live until `compact` changes, which here it
    seldom does. Each recompose (on every change of the enabled actions) drops the stale ones.
    `hidden`: actions whose keys it leaves out (a narrow terminal; help still lists them)."""

    hidden: frozenset[str] = frozenset()

    def compose(self):
        for widget in super().compose():
            if getattr(widget, "action", None) not in self.hidden:
                yield widget

    async def recompose(self) -> None:
        await super().recompose()
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers if node.is_attached]


def fit_footer(footer: TidyFooter, narrow: bool, hidden: frozenset[str]) -> None:
    """Narrow: no spacing, no palette key and `hidden`'s keys left out, so that ? Help stays in sight."""
    footer.compact, footer.show_command_palette = narrow, not narrow
    footer.hidden = hidden if narrow else frozenset()
    footer.refresh(recompose=True)
