"""A Footer that lets go of the keys it replaces, and replaces none when only their enabled state changed."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

NARROW = 120  # columns below which a screen's layout gives way and its footer drops what help still lists


class TidyFooter(Footer):
    """textual 8.2.8's Footer composes its keys anew whenever the screen's bindings change, which here is
    each time the cursor moves onto a row where another key applies. The widgets it drops stay alive: each
    key binds itself to the footer's `compact` reactive (the watchers live until `compact` changes), and
    textual's StylesCache.get_inner_outer is an lru_cache of 1,024 entries keyed by each widget's cache.
    So when the same keys only turn enabled or disabled, they are updated in place; a recompose (other
    keys: another screen, a narrow terminal) drops the stale watchers.
    `hidden`: actions whose keys it leaves out (a narrow terminal; help still lists them)."""

    hidden: frozenset[str] = frozenset()

    def compose(self):
        for widget in super().compose():
            if getattr(widget, "action", None) not in self.hidden:
                yield widget

    def _wanted(self) -> list[tuple[str, str, str, bool, str]]:
        """(key, action, description, enabled, tooltip) of each key Footer.compose would show, in order (the
        first binding of each action; this app binds no groups)."""
        first: dict[str, tuple] = {}
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show and binding.action not in first:
                first[binding.action] = (
                    binding.key,
                    binding.action,
                    binding.description,
                    enabled,
                    tooltip,
                )
        return [v for action, v in first.items() if action not in self.hidden]

    def _update_in_place(self) -> bool:
        """The keys shown are the ones wanted, only enabled or not: mark them so; False when they differ."""
        if not (self._bindings_ready and self.is_attached):
            return False
        shown = list(self.query(FooterKey))
        keys = [k for k in shown if not k.has_class("-command-palette")]
        wanted = self._wanted()
        palette = self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE
        if [(k.key, k.action, k.description) for k in keys] != [
            w[:3] for w in wanted
        ] or palette != (len(keys) < len(shown)):
            return False
        for key, (_, _, _, enabled, tooltip) in zip(keys, wanted, strict=True):
            if key._disabled == enabled:  # FooterKey keeps it so (textual has no setter)
                key._disabled = not enabled
                key.set_class(not enabled, "-disabled")
            if tooltip and key.tooltip != tooltip:
                key.tooltip = tooltip
        return True

    async def recompose(self) -> None:
        if self._update_in_place():
            return
        await super().recompose()
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers if node.is_attached]


def fit_footer(footer: TidyFooter, narrow: bool, hidden: frozenset[str]) -> None:
    """Narrow: no spacing, no palette key and `hidden`'s keys left out, so that ? Help stays in sight."""
    footer.compact, footer.show_command_palette = narrow, not narrow
    footer.hidden = hidden if narrow else frozenset()
    footer.refresh(recompose=True)
