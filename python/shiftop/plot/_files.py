"""What every plot shares: reading the JSON the shiftop tool writes, with one-line errors that name
the file and the field, and saving a figure in the format its file name asks for."""

import json
import os
from collections.abc import Mapping
from pathlib import Path

FORMATS = ("png", "svg", "pdf")


def load_json(source, what):
    """(the parsed JSON, a name for messages) from a path or an already parsed dict."""
    if isinstance(source, Mapping):
        return source, what
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, encoding="utf-8") as file:
                return json.load(file), os.fspath(source)
        except OSError as e:
            raise ValueError(f"{os.fspath(source)}: cannot read the {what}: {e.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{os.fspath(source)}: expected the {what}, not JSON: {e}") from None
    raise TypeError(f"{what}: expected a file name or a dict, got {type(source).__name__}")


def load_json_list(sources, what):
    """[(parsed, name)] from one JSON (path or dict) or a list or tuple of them."""
    if isinstance(sources, (list, tuple)):
        if not sources:
            raise ValueError(f"{what}: expected at least one, got an empty list")
        return [load_json(s, what) for s in sources]
    return [load_json(sources, what)]


def field(obj, key, where, kind=None):
    """obj[key], or a ValueError naming `where` and the missing or mistyped field. `kind` is a type
    or tuple of types the value must have (bool is never a number here)."""
    if not isinstance(obj, Mapping) or key not in obj:
        raise ValueError(f"{where}: expected a field '{key}'")
    value = obj[key]
    wrong_bool = isinstance(value, bool) and kind is not None and bool not in _as_tuple(kind)
    if kind is not None and (wrong_bool or not isinstance(value, kind)):
        names = " or ".join(_type_name(k) for k in _as_tuple(kind))
        raise ValueError(f"{where}: field '{key}' must be {names}, got {value!r:.40}")
    return value


def number(obj, key, where):
    """A numeric field as float."""
    return float(field(obj, key, where, (int, float)))


def output_format(out, format=None):
    """The matplotlib format for `out`: `format` if given, else the file name's extension."""
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: expected a file name, got {type(out).__name__}")
    chosen = format if format is not None else Path(out).suffix.lstrip(".").lower()
    if chosen not in FORMATS:
        if format is not None:
            raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {format!r}")
        raise ValueError(f"{os.fspath(out)}: expected a file name ending in .png, .svg or .pdf")
    return chosen


def save(figure, out, format):
    """Writes `figure` to `out` in `format` (one of FORMATS) and returns it."""
    figure.savefig(out, format=format, dpi=120)
    return figure


def _as_tuple(kind):
    return kind if isinstance(kind, tuple) else (kind,)


def _type_name(kind):
    return {int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object", bool: "true or false"}.get(kind, kind.__name__)
