"""The keys of what a model call uses, summed per category and triage (curator.drafting.USAGE names the
same keys). Their own module, below drafting and candidates: the TUI reads usage before its first
frame, and the drafting package's dataclasses cost ~10 ms to build."""

KEYS = ("tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens", "cost_usd", "calls")
COUNTS = tuple(k for k in KEYS if k != "cost_usd")
