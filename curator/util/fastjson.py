"""JSON on the hook's path without the `json` package.

Importing `json` compiles six regular expressions and loads four modules: ~4 ms of every hook call, a
sixth of a bare interpreter start. Its parsing and its compact output are done by the C scanner and
encoder of `_json`, which `json` itself calls; this calls them directly. Whatever they do not take the
usual way (bytes with a BOM or in UTF-16/32, any error) is handed to `json`, so every result and every
exception is the one `json.loads` / `json.dumps` gives.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # a Python without json's C accelerator (not CPython): json does it all
    _json = None  # type: ignore[assignment]

# JSON's white space (what json.decoder's WHITESPACE matches)
_WS = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoder:
    """What `_json.make_scanner` reads of a decoder: json.JSONDecoder()'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


# (typeshed wants a make_scanner as its context: the C code reads only these attributes)
_scan = _json.make_scanner(_Decoder()) if _json else None  # type: ignore[arg-type]


def _refuse(o: object) -> object:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def loads(s: str | bytes | bytearray):
    """json.loads(s)."""
    if _scan is None:
        return _slow_loads(s)
    if isinstance(s, (bytes, bytearray)):
        # json.detect_encoding: anything but BOM-less UTF-8 starts with one of these
        if s[:1] in (b"\x00", b"\xef", b"\xfe", b"\xff") or s[1:2] == b"\x00":
            return _slow_loads(s)
        try:
            text = s.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return _slow_loads(s)
    elif isinstance(s, str):
        text = s
    else:
        return _slow_loads(s)
    start = len(text) - len(text.lstrip(_WS)) if text[:1] in _WS else 0
    try:
        obj, end = _scan(text, start)
    except Exception:  # StopIteration, or an error the scanner cannot word without json.decoder
        return _slow_loads(s)
    if end != len(text) and text[end:].strip(_WS):
        return _slow_loads(s)  # extra data
    return obj


def _slow_loads(s):
    import json

    return json.loads(s)


def dumps_indented(obj: object) -> str:
    """json.dumps(obj, ensure_ascii=False, indent=1): json's Python encoder (the C one does not indent)
    over the C string encoder. What it does not take the usual way (an error) is json's to say."""
    if _json is not None:
        chunks: list[str] = []
        try:
            _indented(obj, chunks, "\n", set())
            return "".join(chunks)
        except Exception:
            pass
    import json

    return json.dumps(obj, ensure_ascii=False, indent=1)


def _indented(o: object, out: list[str], nl: str, open_: set[int]) -> None:
    """`o` as json's _make_iterencode writes it with indent 1, separators "," and ": " (`nl`: the newline
    and indent of this level; `open_`: the containers being written, for json's circular check)."""
    if isinstance(o, str):
        out.append(_json.encode_basestring(o))
    elif o is None or o is True or o is False:
        out.append("null" if o is None else "true" if o else "false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    elif isinstance(o, (list, tuple, dict)):
        if not o:
            out.append("{}" if isinstance(o, dict) else "[]")
            return
        if id(o) in open_:
            raise ValueError("Circular reference detected")
        open_.add(id(o))
        inner = nl + " "
        if isinstance(o, dict):
            out.append("{")
            for i, (k, v) in enumerate(o.items()):
                out.append(("," if i else "") + inner + _json.encode_basestring(_key(k)) + ": ")
                _indented(v, out, inner, open_)
            out.append(nl + "}")
        else:
            out.append("[")
            for i, v in enumerate(o):
                out.append(("," if i else "") + inner)
                _indented(v, out, inner, open_)
            out.append(nl + "]")
        open_.discard(id(o))
    else:
        _refuse(o)


def _float(f: float) -> str:
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "Infinity" if f > 0 else "-Infinity"
    return float.__repr__(f)


def _key(k: object) -> str:
    """A key as json writes it (skipkeys off)."""
    if isinstance(k, str):
        return k
    if k is None or k is True or k is False:
        return "null" if k is None else "true" if k else "false"
    if isinstance(k, int):
        return int.__repr__(k)
    if isinstance(k, float):
        return _float(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def dumps_compact(obj: object) -> str:
    """json.dumps(obj, ensure_ascii=False, separators=(",", ":"))."""
    if _json is not None:
        if isinstance(obj, str):
            return _json.encode_basestring(obj)
        # markers (new each call, as json's: an error leaves them behind), default, string encoder,
        # indent, separators, sort_keys, skipkeys, allow_nan, as json.JSONEncoder passes them
        encode = _json.make_encoder(
            {}, _refuse, _json.encode_basestring, None, ":", ",", False, False, True
        )
        try:
            return "".join(encode(obj, 0))
        except Exception:
            pass
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def dumps(obj: object, *, ensure_ascii: bool = True) -> str:
    """json.dumps(obj) (or with ensure_ascii=False): the separators ", " and ": ", as a hook's answer."""
    if _json is not None:
        strings = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
        if isinstance(obj, str):
            return strings(obj)
        encode = _json.make_encoder({}, _refuse, strings, None, ": ", ", ", False, False, True)
        try:
            return "".join(encode(obj, 0))
        except Exception:
            pass
    import json

    return json.dumps(obj, ensure_ascii=ensure_ascii)
