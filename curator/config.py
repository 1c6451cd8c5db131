"""Configuration: defaults, user and project layers, validation, and a JSON cache.

Layers, lowest to highest precedence (docs/design.md §4):
  assets/config.default.yaml
  ${XDG_CONFIG_HOME:-~/.config}/memcurate/config.yaml
  <project>/.claude/memcurate.yaml

The default file is also the schema: a key it lacks is unknown, and a value
must have the type of the default it replaces. The hook runs on every turn
and cannot afford to import yaml (~40 ms), so the merged result is cached as
JSON in the data dir, keyed by the layers' mtimes and sizes. The cache is in
Claude's reach: what the hooks read from it is checked (cache_problem) and a
cache that does not check out is rebuilt; a config error is cached too, with
what the write guard can still learn from each layer (guard_of_layers).
"""

from __future__ import annotations

import os

from memcurate.curator import __version__
from memcurate.curator.errors import Refusal
from memcurate.curator.util import fastjson
from memcurate.curator.util.assets import asset
from memcurate.curator.util.atomic import write_bytes

CACHE_NAME = "config.cache.json"
GUARD = "guard"  # cfg["_derived"]["guard"], and a cached error's: what the write guard reads
# Maps whose keys are the user's to choose (the schema fixes only the value type).
_OPEN_MAPS = {("models",)}
# String lists whose entries are regular expressions, checked at load time.
_REGEX_LISTS = {"keywords", "weak_keywords", "reason_words"}
# Keys the schema no longer has, and why: a user or project layer that still sets one loads, with a warning
# (cfg["_derived"]["warnings"], see warnings()), where any other unknown key is an error (a typo, most often).
RETIRED = {
    (
        "second_look",
        "turns_per_category",
    ): "unused since the second look cites digest entries (issue 23); remove it",
}
# second_look.segment_bytes: below this a look's prompt outweighs the session it reads
MIN_SEGMENT_BYTES = 1 << 16


class ConfigError(Refusal):
    """A config file is unreadable or does not fit the schema. The message names file and key.

    `guard` is what the write guard can still learn from the layers (guard_of_layers), when load() knows it."""

    def __init__(self, message: str, guard: dict | None = None) -> None:
        super().__init__(message)
        self.guard = guard


def user_config_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "memcurate", "config.yaml")


def project_config_path(project) -> str:
    return os.path.join(os.fspath(project), ".claude", "memcurate.yaml")


def layer_paths(project) -> list[str]:
    return [asset("config.default.yaml"), user_config_path(), project_config_path(project)]


def _stamp(path: str) -> list | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def _type_name(v: object) -> str:
    return {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        type(None): "nothing (null)",
    }.get(type(v), type(v).__name__)


def _fits(default: object, value: object) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def _check(default: object, value: object, where: str, keypath: tuple[str, ...]) -> object:
    """Validate `value` against the shape of `default`; return it merged over the default."""
    dotted = ".".join(keypath) or "(top level)"
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: {dotted}: expected a mapping, found {_type_name(value)}")
        merged = dict(default)  # values are replaced, never mutated: a shallow copy is enough
        open_map = keypath in _OPEN_MAPS
        sample = next(iter(default.values()), "") if open_map else None
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(f"{where}: {dotted}: keys must be strings, found {k!r}")
            if k in default:
                merged[k] = _check(default[k], v, where, keypath + (k,))
            elif open_map:
                merged[k] = _check(sample, v, where, keypath + (k,))
            else:
                known = ", ".join(sorted(default)) or "none"
                raise ConfigError(
                    f"{where}: {'.'.join(keypath + (k,))}: unknown key (known here: {known})"
                )
        return merged
    if not _fits(default, value):
        raise ConfigError(
            f"{where}: {dotted}: expected {_type_name(default)}, found {_type_name(value)} ({value!r:.60})"
        )
    # (_fits: a list where the default is one)
    if isinstance(default, list) and isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ConfigError(
                    f"{where}: {dotted}[{i}]: expected a string, found {_type_name(item)}"
                )
            if keypath and keypath[-1] in _REGEX_LISTS:
                _check_regex(item, where, f"{dotted}[{i}]")
    if isinstance(value, float) and isinstance(default, float):
        return float(value)
    return value


def _check_regex(pattern: str, where: str, dotted: str) -> None:
    import re  # here: the hook reads a cached config and never checks a pattern

    try:
        re.compile(pattern)
    except re.error as e:
        raise ConfigError(
            f"{where}: {dotted}: expected a regular expression, found {pattern!r} ({e})"
        ) from None


def _semantic_checks(cfg: dict, where: str) -> None:
    # the slow path only: the hook reads the cache
    from memcurate.curator.backends import BACKENDS
    from memcurate.curator.categories import NAMES

    if cfg["backend"] not in BACKENDS:
        raise ConfigError(
            f"{where}: backend: expected one of {', '.join(BACKENDS)}, found {cfg['backend']!r}"
        )
    _drafting_checks(cfg, where)
    if not 0 <= cfg["auto_approve"]["min_confidence"] <= 1:
        raise ConfigError(
            f"{where}: auto_approve.min_confidence: expected a number from 0 to 1, "
            f"found {cfg['auto_approve']['min_confidence']}"
        )
    if not 0 < cfg["hygiene"]["duplicate_threshold"] <= 1:
        raise ConfigError(
            f"{where}: hygiene.duplicate_threshold: expected a number above 0, at most 1, "
            f"found {cfg['hygiene']['duplicate_threshold']}"
        )
    if cfg["library"]["trash_days"] < 0:
        raise ConfigError(
            f"{where}: library.trash_days: expected a whole number of days, at least 0, "
            f"found {cfg['library']['trash_days']}"
        )
    if cfg["hooks"]["review_max_bytes"] < 1024:
        raise ConfigError(
            f"{where}: hooks.review_max_bytes: expected at least 1024, "
            f"found {cfg['hooks']['review_max_bytes']}"
        )
    _recall_checks(cfg["recall"], where)
    _rules_checks(cfg["rules"], where)
    cr = cfg["triage"]["correction"]
    for key, value in [
        *((f"weights.{k}", v) for k, v in cr["weights"].items()),
        ("confirmed", cr["confirmed"]),
    ]:
        if value < 0:
            raise ConfigError(
                f"{where}: triage.correction.{key}: expected a number at least 0, found {value}"
            )
    for name in NAMES:
        if name not in cfg["categories"]:
            raise ConfigError(f"{where}: categories.{name}: missing")
        c = cfg["categories"][name]
        if c["model"] not in cfg["models"]:
            raise ConfigError(
                f"{where}: categories.{name}.model: expected one of {', '.join(cfg['models'])}, found {c['model']!r}"
            )
        if not 0 <= c["threshold"] <= 1:
            raise ConfigError(
                f"{where}: categories.{name}.threshold: expected a number from 0 to 1, found {c['threshold']}"
            )
        if c["budget"] < 1:
            raise ConfigError(
                f"{where}: categories.{name}.budget: expected at least 1 line, found {c['budget']}"
            )
        if c["saturation"] <= 0:
            raise ConfigError(
                f"{where}: categories.{name}.saturation: expected a positive number, found {c['saturation']}"
            )


def _recall_checks(rc: dict, where: str) -> None:
    """recall's bounds: Claude Code caps a hook's additionalContext at 10,000 characters."""
    for key, low, high in (("max_chars", 1, 10_000), ("max_memories", 1, 20), ("min_words", 1, 50)):
        if not low <= rc[key] <= high:
            raise ConfigError(
                f"{where}: recall.{key}: expected a whole number from {low} to {high}, found {rc[key]}"
            )


def _rules_checks(rc: dict, where: str) -> None:
    """Rule graduation's bounds: one session is no recurrence; the ledger's caps neither starve it nor let
    a project's config (which Claude can write) lift them out of reach."""
    for key, low, high in (
        ("threshold", 2, None),
        ("per_output", 1, 10),
        ("forget_after_days", 1, None),
        ("ledger_max_entries", 100, 100_000),
        ("ledger_max_bytes", 1 << 16, 1 << 26),
    ):
        if rc[key] < low or (high is not None and rc[key] > high):
            expected = (
                f"a whole number from {low} to {high}"
                if high
                else f"a whole number of at least {low}"
            )
            raise ConfigError(f"{where}: rules.{key}: expected {expected}, found {rc[key]}")


def _drafting_checks(cfg: dict, where: str) -> None:
    """The model calls' keys: drafting.fallback, verify.model and second_look.model name model aliases (or
    offline), the deadline leaves room for a call, the cap and the look's bounds are in range."""
    d, aliases = cfg["drafting"], ", ".join(cfg["models"])
    for i, alias in enumerate(d["fallback"]):
        if alias != "offline" and alias not in cfg["models"]:
            raise ConfigError(
                f"{where}: drafting.fallback[{i}]: expected offline or one of {aliases}, found {alias!r}"
            )
    for section in ("second_look", "verify"):
        if cfg[section]["model"] not in cfg["models"]:
            raise ConfigError(
                f"{where}: {section}.model: expected one of {aliases}, found {cfg[section]['model']!r}"
            )
    _look_checks(cfg["second_look"], where)
    if d["max_input_tokens"] < 0:
        raise ConfigError(
            f"{where}: drafting.max_input_tokens: expected 0 (no cap) or a positive whole number, "
            f"found {d['max_input_tokens']}"
        )
    for key in ("timeout_seconds", "deadline_seconds"):
        if d[key] <= 0:
            raise ConfigError(
                f"{where}: drafting.{key}: expected a positive number of seconds, found {d[key]}"
            )
    if d["deadline_seconds"] < d["timeout_seconds"]:
        raise ConfigError(
            f"{where}: drafting.deadline_seconds: expected at least drafting.timeout_seconds "
            f"({d['timeout_seconds']:g}), found {d['deadline_seconds']:g}"
        )


def _look_checks(look: dict, where: str) -> None:
    """The second look's bounds: a segment of digest worth a call, and a segment of transcript worth a look
    (the hook reads segment_bytes from the cache: a tiny one would ask for a look after every turn)."""
    if look["max_chars"] < 1000:
        raise ConfigError(
            f"{where}: second_look.max_chars: expected at least 1000, found {look['max_chars']}"
        )
    if look["segment_bytes"] and look["segment_bytes"] < MIN_SEGMENT_BYTES:
        raise ConfigError(
            f"{where}: second_look.segment_bytes: expected 0 (only at second_look.events) or at "
            f"least {MIN_SEGMENT_BYTES}, found {look['segment_bytes']}"
        )


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None


def _read_yaml(path: str, text: str | None = None) -> object:
    import yaml  # only when a layer changed: ~40 ms that the hook must not pay on every turn

    text = _read_text(path) if text is None else text
    try:
        # libyaml's loader when installed: the defaults parse in 6 ms instead of 80 (pure Python)
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise ConfigError(f"{path}: invalid YAML{at}: {getattr(e, 'problem', None) or e}") from None


def _renamed(layer: object, where: str) -> object:
    """A user or project layer with the old section `hook:` folded into `hooks:` (whose keys win)."""
    if not isinstance(layer, dict) or "hook" not in layer:
        return layer
    layer = dict(layer)
    old = layer.pop("hook")
    if not isinstance(old, dict):
        raise ConfigError(
            f"{where}: hook: expected a mapping, found {_type_name(old)} (hook: is the old "
            "spelling of hooks:)"
        )
    new = layer.get("hooks", {})
    layer["hooks"] = {**old, **new} if isinstance(new, dict) else new
    return layer


def _retired(layer: object, where: str) -> tuple[object, list[str]]:
    """A user or project layer without the keys the schema retired (RETIRED), and a warning for each."""
    if not isinstance(layer, dict):
        return layer, []
    warnings = []
    for keypath, why in RETIRED.items():
        *parents, key = keypath
        section: object = layer
        for name in parents:
            section = section.get(name) if isinstance(section, dict) else None
        if isinstance(section, dict) and key in section:
            layer = _without(layer, keypath)
            warnings.append(f"{where}: {'.'.join(keypath)}: {why}")
    return layer, warnings


def _without(layer: dict, keypath: tuple[str, ...]) -> dict:
    """A copy of `layer` without the key at `keypath` (the layer itself is left as it was read)."""
    head, *rest = keypath
    out = dict(layer)
    if rest:
        out[head] = _without(layer[head], tuple(rest))
    else:
        del out[head]
    return out


def warnings(cfg: dict) -> list[str]:
    """What loaded but deserves the user's attention (a retired key still set), one line each."""
    found = (cfg.get("_derived") or {}).get("warnings")
    return [w for w in found if isinstance(w, str)] if isinstance(found, list) else []


def build(paths: list[str]) -> dict:
    """Parse and validate every existing layer; return the merged config.

    Two keys only tighten across layers (the project layer is within Claude's reach, the user layer is
    not): hooks.review_auto_memory is on when any layer turns it on, and every layer's memory.root is
    kept (_derived.guard.roots) for the write guard, which protects them all."""
    default_path, *overrides = paths
    cfg, roots, review = _defaults(default_path)
    notes: list[str] = []
    for path in overrides:
        if not os.path.isfile(path):
            continue
        layer = _read_yaml(path)
        if layer is None:  # an empty file changes nothing
            continue
        checked, retired = _retired(_renamed(layer, path), path)
        notes += retired
        merged = _check(cfg, checked, path, ())
        if not isinstance(merged, dict):  # (_check refuses a layer that is no mapping)
            raise ConfigError(f"{path}: not a mapping of settings")
        cfg = merged
        _semantic_checks(cfg, path)
        more, on = _layer_guard(_renamed(layer, path))
        roots, review = roots + [r for r in more if r not in roots], review or bool(on)
    cfg["hooks"] = {**cfg["hooks"], "review_auto_memory": review}
    cfg["_derived"] = {**_derive(cfg), GUARD: {"roots": roots}, "warnings": notes}
    # the caller's to change: nothing of it is shared with _built_defaults
    import copy  # here: the hook reads the cache, and copy loads weakref

    return copy.deepcopy(cfg)


# The default layer parsed and checked, by its text: a process (an engine, the TUI, a test run) builds its
# config many times over the same defaults, and the text is a cheap, exact key.
_built_defaults: dict[str, tuple[dict, list[str], bool | None]] = {}


def _defaults(path: str) -> tuple[dict, list[str], bool | None]:
    """The default layer, checked against itself (list items, regexes) and its semantics, and what it tells
    the write guard. Shared between builds: _check copies what a layer replaces and build copies the result."""
    text = _read_text(path)
    if text not in _built_defaults:
        cfg = _read_yaml(path, text)
        # the schema checks itself
        cfg = _check(cfg, cfg, path, ()) if isinstance(cfg, dict) else None
        if not isinstance(cfg, dict):
            raise ConfigError(f"{path}: expected a mapping at the top level")
        _semantic_checks(cfg, path)
        _built_defaults.clear()  # one set of defaults per process, in practice: keep only the latest
        _built_defaults[text] = (cfg, *_layer_guard(cfg))
    cfg, roots, review = _built_defaults[text]
    return dict(cfg), list(roots), review  # build sets top-level keys: on a copy


def _layer_guard(layer: object) -> tuple[list[str], bool | None]:
    """What one layer, valid or not, tells the write guard: the memory.root it names (unless `auto`), and
    whether it turns review mode on (None: the layer cannot say; anything but a plain `false` is on)."""
    if not isinstance(layer, dict):
        return [], None
    memory = layer.get("memory")
    root = memory.get("root") if isinstance(memory, dict) else None
    roots = [root] if isinstance(root, str) and root and root != "auto" else []
    review: bool | None = False
    for name in ("hook", "hooks"):
        section = layer.get(name)
        if name in layer and not isinstance(section, dict):
            review = None
        elif isinstance(section, dict) and "review_auto_memory" in section:
            if section["review_auto_memory"] is not False:
                return roots, True
    return roots, review


def guard_of_layers(paths: list[str], cached: object = None) -> dict:
    """What the write guard can still learn when the config does not build: each layer read on its own
    (memory.root and review mode, see _layer_guard), and the roots an earlier cache named. review_auto_memory
    is None when a layer that cannot be read might turn it on."""
    roots: list[str] = _cached_roots(cached)
    review: bool | None = False
    for path in paths:
        if not os.path.exists(path):
            continue
        try:
            found, on = _layer_guard(_read_yaml(path))
        except ConfigError:
            found, on = [], None
        roots += [r for r in found if r not in roots]
        review = True if (review or on) else (None if None in (review, on) else False)
    return {"roots": roots, "review_auto_memory": review}


def _cached_roots(cached: object) -> list[str]:
    """The memory roots a cache document names (a config's, or an error entry's), strings only."""
    if not isinstance(cached, dict):
        return []
    found: list = []
    cfg = cached.get("config")
    if isinstance(cfg, dict):
        found.append(
            (cfg.get("memory") or {}).get("root") if isinstance(cfg.get("memory"), dict) else None
        )
        guard = (
            (cfg.get("_derived") or {}).get(GUARD)
            if isinstance(cfg.get("_derived"), dict)
            else None
        )
        found += (
            guard.get("roots", [])
            if isinstance(guard, dict) and isinstance(guard.get("roots"), list)
            else []
        )
    guard = cached.get(GUARD)
    if isinstance(guard, dict) and isinstance(guard.get("roots"), list):
        found += guard["roots"]
    return list(
        dict.fromkeys(
            r for r in found if isinstance(r, str) and r and r != "auto" and "\0" not in r
        )
    )


def _derive(cfg: dict) -> dict:
    """Work that depends only on the config, done once here and kept in the cache (see keywords.py)."""
    from memcurate.curator.capture.triage import derive

    return {"triage": derive(cfg)}


def load(project, data_dir=None) -> dict:
    """The merged config of `project`; cached as JSON in `data_dir` when given.

    The cache is Claude's to write (the data dir is in the project), so it is input, not truth: a
    config it holds is used only when its key matches and the keys the hooks read check out
    (cache_problem); anything else is rebuilt from the YAML layers. A config that does not build
    is cached as its error, with what the write guard can still learn (ConfigError.guard)."""
    paths = layer_paths(project)
    key = {"version": __version__, "layers": [[p, _stamp(p)] for p in paths]}
    cache = os.path.join(data_dir, CACHE_NAME) if data_dir else None
    cached = None
    if cache is not None:
        index = b""
        try:
            with open(cache, "rb") as f:
                # the config on the first line; the keyword index, three quarters of the bytes, after it
                line, _, index = f.read().partition(b"\n")
            cached = fastjson.loads(line)
        except (OSError, ValueError, RecursionError):
            cached = None
        if isinstance(cached, dict) and cached.get("key") == key:
            if "config" in cached and cache_problem(cached["config"]) is None:
                cfg = cached["config"]
                cfg["_derived"]["triage"] = CachedIndex(cfg["_derived"]["triage"], index)
                return cfg
            error, guard = cached.get("error"), cached.get(GUARD)
            if isinstance(error, str) and isinstance(guard, dict) and _guard_ok(guard):
                raise ConfigError(error, guard)
    try:
        cfg = build(paths)
    except ConfigError as e:
        guard = guard_of_layers(paths, cached)
        _write_cache(cache, {"key": key, "error": str(e), GUARD: guard})
        raise ConfigError(str(e), guard) from None
    ready = cfg["_derived"]["triage"]
    head = {**cfg, "_derived": {**cfg["_derived"], "triage": {"check": ready["check"]}}}
    _write_cache(cache, {"key": key, "config": head}, ready)
    return cfg


def _write_cache(cache: str | None, doc: dict, index: dict | None = None) -> None:
    """The cache as two lines of JSON: `doc`, then the keyword index (read by CachedIndex, when needed)."""
    if cache is None:
        return
    lines = [fastjson.dumps_compact(doc)]
    if index is not None:
        lines.append(fastjson.dumps_compact(index))
    try:
        write_bytes(cache, ("\n".join(lines) + "\n").encode("utf-8"), durable=False)
    except OSError:
        pass  # a cache we cannot write costs time, not correctness


class CachedIndex(dict):
    """The keyword index of a config read from the cache (its `_derived.triage`): the checksum of the keyword
    lists it was built from, read with the config, and `load`, the index itself (~60 KB, the cache's second
    line) parsed only when a pass has text to score (triage.Rules). The line is in Claude's reach like the rest:
    one that is not an index of these keyword lists gives None, and the triage builds its own."""

    def __init__(self, head: object, raw: bytes) -> None:
        super().__init__(head if isinstance(head, dict) else {})
        self._raw = raw

    def load(self) -> dict | None:
        try:
            index = fastjson.loads(self._raw)
        except (ValueError, RecursionError):
            return None
        if not isinstance(index, dict) or index.get("check") != self.get("check"):
            return None
        for name in ("keywords", "reasons"):
            if _index_problem(index.get(name)):
                return None
        return index


def _index_problem(data: object) -> bool:
    """Whether a keyword set's index (KeywordSet.index_data) is not of the shape KeywordSet.from_index reads."""
    if not isinstance(data, dict):
        return True
    records, always, by_literal = data.get("records"), data.get("always"), data.get("by_literal")
    return not (
        isinstance(records, list)
        and set(map(type, records)) <= {str}
        and isinstance(always, list)
        and set(map(type, always)) <= {int}
        and all(0 <= i < len(records) for i in always)
        and isinstance(by_literal, dict)
        and set(map(type, by_literal.values())) <= {str}
        and isinstance(data.get("words"), str)
        and isinstance(data.get("word_ids"), str)
    )


def _guard_ok(guard: dict) -> bool:
    roots = guard.get("roots")
    return (
        isinstance(roots, list)
        and all(isinstance(r, str) for r in roots)
        and guard.get("review_auto_memory") in (True, False, None)
    )


# What the hooks read from a cached config, and its type ([str]: a list of strings; a dict: its keys, checked
# the same way). A cache holding anything else is rebuilt: the hook must not trust it, nor fail on it.
_NUM = (int, float)
_STRS = [str]
_CATEGORY = {
    "budget": int,
    "model": str,
    "threshold": _NUM,
    "saturation": _NUM,
    "speakers": dict,
    "keywords": _STRS,
    "weak_keywords": _STRS,
}
HOOK_KEYS: dict = {
    "memory": {"root": str},
    "backend": str,
    "models": dict,
    "hooks": {
        "review_auto_memory": bool,
        "review_max_bytes": int,
        "lock_wait_seconds": _NUM,
        "summary_events": _STRS,
    },
    "recall": {"enabled": bool, "max_chars": int, "max_memories": int, "min_words": int},
    "memory_md": {"max_lines": int, "max_bytes": int},
    "hygiene": {"interval_minutes": _NUM},
    "rules": {
        "enabled": bool,
        "threshold": int,
        "per_output": int,
        "forget_after_days": int,
        "ledger_max_entries": int,
        "ledger_max_bytes": int,
    },
    "second_look": {"enabled": bool, "events": _STRS, "max_chars": int, "segment_bytes": int},
    "triage": {
        "reason_words": _STRS,
        "reason_weight": _NUM,
        "weak_weight": _NUM,
        "line_cap": _NUM,
        "acknowledgements": _STRS,
        "narration": _STRS,
        "narration_fillers": _STRS,
        "narration_max_words": int,
        "snippets_per_category": int,
        "snippet_chars": int,
        "excerpt_chars": int,
        "context_lines": int,
        "max_line_bytes": int,
        "max_message_chars": int,
        "correction": {"openers": _STRS, "concessions": _STRS, "weights": dict, "confirmed": _NUM},
    },
    "categories": {},  # filled below: every category's keys
    "_derived": {"triage": dict, GUARD: {"roots": _STRS}},
}


def cache_problem(cfg: object) -> str | None:
    """What is wrong with a config read from the cache (the first key missing or of the wrong type, a value
    out of range), None when the hooks may use it. A few hundred lookups: cheap."""
    from memcurate.curator.categories import NAMES  # a plain module, ~0.1 ms

    try:
        problem = _shape(HOOK_KEYS, cfg, ())
        if problem or not isinstance(cfg, dict):
            return problem or "not a mapping"
        for name in NAMES:
            extras: dict[str, dict[str, object]] = {
                "runbook": {"error_tools": _STRS, "error_fix_weight": _NUM},
                "session_summary": {"activity": dict, "ignored_tools": _STRS, "subagents": bool},
            }
            extra = extras.get(name, {})
            problem = problem or _shape(
                {**_CATEGORY, **extra}, cfg["categories"].get(name), ("categories", name)
            )
        if problem:
            return problem
        if cfg["hooks"]["review_max_bytes"] < 1024:
            return "hooks.review_max_bytes: below 1024"
        _recall_checks(cfg["recall"], CACHE_NAME)
        _rules_checks(cfg["rules"], CACHE_NAME)
        _look_checks(cfg["second_look"], CACHE_NAME)
    except ConfigError as e:
        return str(e)
    return None


def _shape(spec: object, value: object, keypath: tuple[str, ...]) -> str | None:
    dotted = ".".join(keypath) or "(top level)"
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return f"{dotted}: not a mapping"
        for k, sub in spec.items():
            if k not in value:
                return f"{'.'.join(keypath + (k,))}: missing"
            problem = _shape(sub, value[k], keypath + (k,))
            if problem:
                return problem
        return None
    if isinstance(spec, list):
        ok = isinstance(value, list) and set(map(type, value)) <= {
            str
        }  # C speed: keyword lists are long
        return None if ok else f"{dotted}: not a list of strings"
    types = spec if isinstance(spec, tuple) else (spec,)
    if isinstance(value, bool) != (bool in types) or not isinstance(value, types):
        return f"{dotted}: not {_type_name(types[0]())}"
    return None


def category(cfg: dict, name: str) -> dict:
    return cfg["categories"][name]
