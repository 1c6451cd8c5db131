"""What the model calls cost: the usage keys of a state line, and the totals per triage and overall.

A category's state line carries the usage of every model call made for it as SUMS (the shared contract
of issue 10): `tokens_in` (input, cache reads and writes included), `tokens_out`, `cache_read_tokens`,
`cache_write_tokens`, `cost_usd` (left out while unknown) and `calls`. Whatever adds a call for a
category (a retry, a fallback, a verification) adds its usage with `add_call`. A call about the whole
triage rather than one category (the "second look") keeps the same keys in
`staging/<tid>/second_look.json`.

The totals read only state logs and that small file: never triage.json (kilobytes of excerpts).
"""

from __future__ import annotations

from collections.abc import Mapping

from memcurate.curator.candidates import staging
from memcurate.curator.util.usage import COUNTS, KEYS  # noqa: F401 (KEYS re-exported)


def empty() -> dict:
    return {**{k: 0 for k in COUNTS}, "cost_usd": 0.0}


def _count(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _cost(v) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else 0.0


def add(total: dict, rec: Mapping) -> dict:
    """Add the usage keys of `rec` (a state line, a second look, another total) into `total`; anything
    missing, negative or of the wrong type counts as 0 (a hand-edited or older file never breaks a total)."""
    for k in COUNTS:
        total[k] += _count(rec.get(k))
    total["cost_usd"] = round(total["cost_usd"] + _cost(rec.get("cost_usd")), 6)
    return total


def add_call(before: Mapping, result) -> dict:
    """The usage fields of a state line once `result` (a DraftResult: one or more calls) is added to the
    sums `before` carries (the category's current record). Cost stays out while no call priced it."""
    out = add(add(empty(), before), {k: getattr(result, k, 0) for k in KEYS})
    if not out["cost_usd"]:
        del out["cost_usd"]
    return out


def second_look(data, tid: str) -> dict:
    """The usage a triage's second look recorded; empty when it has none or it does not read."""
    try:
        return add(empty(), staging.read_second_look(data, tid) or {})
    except staging.StagingError:
        return empty()


def of_triage(
    data, tid: str, states: Mapping[str, Mapping] | None = None, look: Mapping | None = None
) -> dict:
    """The sums over a triage's categories (their last state lines) and its second look. `states` are
    the category records and `look` the look's record ({} for none) when the caller has read them."""
    if states is None:
        try:
            doc = staging.load_triage(data, tid)
            states = staging.category_states(data, tid, doc)
            look = (doc.get("second_look") or {}).get("record") or {}
        except staging.StagingError:
            states = {}
    total = add(empty(), look) if look is not None else second_look(data, tid)
    for rec in states.values():
        add(total, rec)
    return total


def totals(data) -> dict:
    """{"overall": sums, "triages": {tid: sums}} over every staged triage (an unreadable one adds what
    its second look recorded, if anything)."""
    overall, per = empty(), {}
    for tid in staging.triage_ids(data):
        per[tid] = of_triage(data, tid)
        add(overall, per[tid])
    return {"overall": overall, "triages": per}


def describe(total: Mapping) -> str:
    """One line for a person: tokens in/out, cache reads/writes, cost, calls."""
    if not total.get("calls"):
        return "no model call yet"

    def k(n: int) -> str:
        return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"

    # no cost with calls made: a model without a known price (or a backend that does not say)
    cost = f"${total['cost_usd']:.4f}" if total.get("cost_usd") else "cost unknown"
    return (
        f"{k(total.get('tokens_in', 0))} in / {k(total.get('tokens_out', 0))} out, cache "
        f"{k(total.get('cache_read_tokens', 0))} read / {k(total.get('cache_write_tokens', 0))} written, "
        f"{cost}, {total.get('calls', 0)} call(s)"
    )
