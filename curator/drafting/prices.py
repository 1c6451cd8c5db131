"""What a Messages API call costs, in USD, for the anthropic backend (the claude CLI reports its own cost).

Per model id: base input, output, 5-minute cache write (what `cache_control: ephemeral` writes) and
cache read, in USD per million tokens, from Anthropic's pricing and model overview pages as of
2026-10 (Sonnet 5.5's cache read cut to $0.10 on 2026-10-07 included). Claude Haiku 5.5 costs more
for a prompt over 100,000 tokens; its lower band is the one here, since memcurate's prompts stay far
below that (drafting.max_input_tokens). Prices change: this table is the one place to update.

A dated id (claude-haiku-4-5-20251001), a platform prefix (anthropic.claude-…, a Bedrock id) or a
suffix (@20250929, [1m]) maps to its family. A model not listed has no known price: its calls record
no cost rather than a wrong one.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Price(NamedTuple):
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float  # 5-minute cache write
    cache_read: float


PRICES: dict[str, Price] = {
    "claude-opus-5-5": Price(4.00, 20.00, 5.00, 0.20),
    "claude-sonnet-5-5": Price(2.00, 10.00, 2.50, 0.10),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01),
    "claude-opus-5": Price(5.00, 25.00, 6.25, 0.50),
    "claude-sonnet-5": Price(2.00, 10.00, 2.50, 0.20),
    "claude-opus-4-8": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-7": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-6": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-5": Price(5.00, 25.00, 6.25, 0.50),
    "claude-opus-4-1": Price(15.00, 75.00, 18.75, 1.50),
    "claude-opus-4": Price(15.00, 75.00, 18.75, 1.50),
    "claude-sonnet-4-6": Price(3.00, 15.00, 3.75, 0.30),
    "claude-sonnet-4-5": Price(3.00, 15.00, 3.75, 0.30),
    "claude-sonnet-4": Price(3.00, 15.00, 3.75, 0.30),
    "claude-haiku-4-5": Price(1.00, 5.00, 1.25, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.00, 1.00, 0.08),
}

_DATED = re.compile(r"(?:-\d{8}|-latest|-v\d+(?::\d+)?|@.*|\[.*\])+$")


def family(model: str) -> str:
    """The table's key for a model id: from `claude-` on, without a date, version or context suffix."""
    m = model.strip().lower()
    start = m.find("claude-")
    return _DATED.sub("", m[start:] if start >= 0 else m)


def price_for(model: str) -> Price | None:
    return PRICES.get(family(model))


def cost_usd(
    model: str, *, uncached_in: int, out: int, cache_write: int, cache_read: int
) -> float | None:
    """What one call cost; None when the model's price is unknown."""
    p = price_for(model)
    if p is None:
        return None
    return round(
        (
            uncached_in * p.input
            + out * p.output
            + cache_write * p.cache_write
            + cache_read * p.cache_read
        )
        / 1_000_000,
        8,
    )
