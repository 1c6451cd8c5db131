"""Configuration: defaults, user and project layers, validation, and a JSON cache.

Layers, lowest to highest precedence (DESIGN §4):
  assets/config.default.yaml
  ${XDG_CONFIG_HOME:-~/.config}/memcurate/config.yaml
  <project>/.claude/memcurate.yaml

The default file is also the schema: a key it lacks is unknown, and a value
must have the type of the default it replaces. The hook runs on every turn
and cannot afford to import yaml (~40 ms), so the merged result is cached as
JSON in the data dir, keyed by the layers' mtimes and sizes.
"""

from __future__ import annotations

import json
import os
import re

from curator import __version__
from curator.util.assets import asset
from curator.util.atomic import write_json

CACHE_NAME = "config.cache.json"
BACKENDS = ("auto", "anthropic", "claude-cli", "offline")
# Maps whose keys are the user's to choose (the schema fixes only the value type).
_OPEN_MAPS = {("models",)}
# String lists whose entries are regular expressions, checked at load time.
_REGEX_LISTS = {"keywords", "weak_keywords", "reason_words"}


class ConfigError(Exception):
    """A config file is unreadable or does not fit the schema. The message names file and key."""


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
    return {dict: "a mapping", list: "a list", str: "a string", bool: "true or false", int: "a whole number",
            float: "a number", type(None): "nothing (null)"}.get(type(v), type(v).__name__)


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
                raise ConfigError(f"{where}: {'.'.join(keypath + (k,))}: unknown key (known here: {known})")
        return merged
    if not _fits(default, value):
        raise ConfigError(f"{where}: {dotted}: expected {_type_name(default)}, found {_type_name(value)} ({value!r:.60})")
    if isinstance(default, list):
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ConfigError(f"{where}: {dotted}[{i}]: expected a string, found {_type_name(item)}")
            if keypath and keypath[-1] in _REGEX_LISTS:
                _check_regex(item, where, f"{dotted}[{i}]")
    if isinstance(value, float) and isinstance(default, float):
        return float(value)
    return value


def _check_regex(pattern: str, where: str, dotted: str) -> None:
    try:
        re.compile(pattern)
    except re.error as e:
        raise ConfigError(f"{where}: {dotted}: expected a regular expression, found {pattern!r} ({e})") from None


def _semantic_checks(cfg: dict, where: str) -> None:
    from curator.categories import NAMES  # the slow path only: the hook reads the cache

    if cfg["backend"] not in BACKENDS:
        raise ConfigError(f"{where}: backend: expected one of {', '.join(BACKENDS)}, found {cfg['backend']!r}")
    _drafting_checks(cfg, where)
    if not 0 <= cfg["auto_approve"]["min_confidence"] <= 1:
        raise ConfigError(f"{where}: auto_approve.min_confidence: expected a number from 0 to 1, "
                          f"found {cfg['auto_approve']['min_confidence']}")
    if not 0 < cfg["hygiene"]["duplicate_threshold"] <= 1:
        raise ConfigError(f"{where}: hygiene.duplicate_threshold: expected a number above 0, at most 1, "
                          f"found {cfg['hygiene']['duplicate_threshold']}")
    if cfg["library"]["trash_days"] < 0:
        raise ConfigError(f"{where}: library.trash_days: expected a whole number of days, at least 0, "
                          f"found {cfg['library']['trash_days']}")
    if cfg["hooks"]["review_max_bytes"] < 1024:
        raise ConfigError(f"{where}: hooks.review_max_bytes: expected at least 1024, "
                          f"found {cfg['hooks']['review_max_bytes']}")
    _recall_checks(cfg["recall"], where)
    _rules_checks(cfg["rules"], where)
    cr = cfg["triage"]["correction"]
    for key, value in [*((f"weights.{k}", v) for k, v in cr["weights"].items()), ("confirmed", cr["confirmed"])]:
        if value < 0:
            raise ConfigError(f"{where}: triage.correction.{key}: expected a number at least 0, found {value}")
    for name in NAMES:
        if name not in cfg["categories"]:
            raise ConfigError(f"{where}: categories.{name}: missing")
        c = cfg["categories"][name]
        if c["model"] not in cfg["models"]:
            raise ConfigError(
                f"{where}: categories.{name}.model: expected one of {', '.join(cfg['models'])}, found {c['model']!r}")
        if not 0 <= c["threshold"] <= 1:
            raise ConfigError(f"{where}: categories.{name}.threshold: expected a number from 0 to 1, found {c['threshold']}")
        if c["budget"] < 1:
            raise ConfigError(f"{where}: categories.{name}.budget: expected at least 1 line, found {c['budget']}")
        if c["saturation"] <= 0:
            raise ConfigError(f"{where}: categories.{name}.saturation: expected a positive number, found {c['saturation']}")


def _recall_checks(rc: dict, where: str) -> None:
    """recall's bounds: Claude Code caps a hook's additionalContext at 10,000 characters."""
    for key, low, high in (("max_chars", 1, 10_000), ("max_memories", 1, 20), ("min_words", 1, 50)):
        if not low <= rc[key] <= high:
            raise ConfigError(f"{where}: recall.{key}: expected a whole number from {low} to {high}, found {rc[key]}")


def _rules_checks(rc: dict, where: str) -> None:
    """Rule graduation's bounds: one session is no recurrence; the ledger's caps neither starve it nor let
    a project's config (which Claude can write) lift them out of reach."""
    for key, low, high in (("threshold", 2, None), ("per_output", 1, 10), ("forget_after_days", 1, None),
                           ("ledger_max_entries", 100, 100_000), ("ledger_max_bytes", 1 << 16, 1 << 26)):
        if rc[key] < low or (high is not None and rc[key] > high):
            expected = f"a whole number from {low} to {high}" if high else f"a whole number of at least {low}"
            raise ConfigError(f"{where}: rules.{key}: expected {expected}, found {rc[key]}")


def _drafting_checks(cfg: dict, where: str) -> None:
    """The model calls' keys: drafting.fallback, verify.model and second_look.model name model aliases (or
    offline), the deadline leaves room for a call, the cap and the look's bounds are in range."""
    d, aliases = cfg["drafting"], ", ".join(cfg["models"])
    for i, alias in enumerate(d["fallback"]):
        if alias != "offline" and alias not in cfg["models"]:
            raise ConfigError(f"{where}: drafting.fallback[{i}]: expected offline or one of {aliases}, found {alias!r}")
    for section in ("second_look", "verify"):
        if cfg[section]["model"] not in cfg["models"]:
            raise ConfigError(f"{where}: {section}.model: expected one of {aliases}, found {cfg[section]['model']!r}")
    for key, least in (("max_chars", 1000), ("turns_per_category", 1)):
        if cfg["second_look"][key] < least:
            raise ConfigError(f"{where}: second_look.{key}: expected at least {least}, found {cfg['second_look'][key]}")
    if d["max_input_tokens"] < 0:
        raise ConfigError(f"{where}: drafting.max_input_tokens: expected 0 (no cap) or a positive whole number, "
                          f"found {d['max_input_tokens']}")
    for key in ("timeout_seconds", "deadline_seconds"):
        if d[key] <= 0:
            raise ConfigError(f"{where}: drafting.{key}: expected a positive number of seconds, found {d[key]}")
    if d["deadline_seconds"] < d["timeout_seconds"]:
        raise ConfigError(f"{where}: drafting.deadline_seconds: expected at least drafting.timeout_seconds "
                          f"({d['timeout_seconds']:g}), found {d['deadline_seconds']:g}")


def _read_yaml(path: str) -> object:
    import yaml  # only when a layer changed: ~40 ms that the hook must not pay on every turn

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return yaml.safe_load(text)
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
        raise ConfigError(f"{where}: hook: expected a mapping, found {_type_name(old)} (hook: is the old "
                          "spelling of hooks:)")
    new = layer.get("hooks", {})
    layer["hooks"] = {**old, **new} if isinstance(new, dict) else new
    return layer


def build(paths: list[str]) -> dict:
    """Parse and validate every existing layer; return the merged config."""
    default_path, *overrides = paths
    cfg = _read_yaml(default_path)
    if not isinstance(cfg, dict):
        raise ConfigError(f"{default_path}: expected a mapping at the top level")
    cfg = _check(cfg, cfg, default_path, ())  # the schema checks itself: list items, regexes
    _semantic_checks(cfg, default_path)
    for path in overrides:
        if not os.path.isfile(path):
            continue
        layer = _read_yaml(path)
        if layer is None:  # an empty file changes nothing
            continue
        cfg = _check(cfg, _renamed(layer, path), path, ())
        _semantic_checks(cfg, path)
    cfg["_derived"] = _derive(cfg)
    return cfg


def _derive(cfg: dict) -> dict:
    """Work that depends only on the config, done once here and kept in the cache (see keywords.py)."""
    from curator.capture.triage import derive

    return {"triage": derive(cfg)}


def load(project, data_dir=None) -> dict:
    """The merged config of `project`; cached as JSON in `data_dir` when given."""
    paths = layer_paths(project)
    key = {"version": __version__, "layers": [[p, _stamp(p)] for p in paths]}
    cache = os.path.join(data_dir, CACHE_NAME) if data_dir else None
    if cache is not None:
        try:
            with open(cache, "rb") as f:
                cached = json.loads(f.read())
            if cached.get("key") == key:
                return cached["config"]
        except (OSError, ValueError, AttributeError):
            pass
    cfg = build(paths)
    if cache is not None:
        try:
            write_json(cache, {"key": key, "config": cfg}, durable=False)
        except OSError:
            pass  # a cache we cannot write costs time, not correctness
    return cfg


def category(cfg: dict, name: str) -> dict:
    return cfg["categories"][name]
