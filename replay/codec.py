"""A partition's history as JSON, so that a run can continue from the last.

Incremental runs (``--state DIR``) save each partition's ``History`` at the
end and start the next day's replay from it. The encoding is explicit and
closed: only the replay's own dataclasses and enums, tuples, frozensets,
datetimes and JSON scalars; anything else is an error, never a pickle.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from replay import state as _state
from replay import types as _types

_DATACLASSES: dict[str, type] = {
    cls.__name__: cls
    for module in (_state, _types)
    for cls in vars(module).values()
    if isinstance(cls, type) and is_dataclass(cls) and cls.__module__ == module.__name__
}
_ENUMS: dict[str, type[Enum]] = {
    cls.__name__: cls
    for cls in vars(_types).values()
    if isinstance(cls, type) and issubclass(cls, Enum) and cls.__module__ == _types.__name__
}

#: bump when History's shape changes; an old state is then refused, not misread
VERSION = 6


class StateError(ValueError):
    """A saved state this version cannot read."""


def _encode(value: Any) -> Any:
    if isinstance(value, Enum):  # before str: a StrEnum member is a str
        return {"__enum__": type(value).__name__, "v": value.value}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return {"__dt__": value.isoformat()}
    if isinstance(value, tuple):
        return {"__t__": [_encode(v) for v in value]}
    if isinstance(value, frozenset):
        return {"__fs__": sorted((_encode(v) for v in value), key=json.dumps)}
    if is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _DATACLASSES.get(name) is not type(value):
            raise StateError(f"cannot save a {name}")
        return {"__dc__": name, **{f.name: _encode(getattr(value, f.name)) for f in fields(value)}}
    raise StateError(f"cannot save a {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        raise StateError("bare lists are not part of the state encoding")
    if not isinstance(value, dict):
        return value
    if "__t__" in value:
        return tuple(_decode(v) for v in value["__t__"])
    if "__fs__" in value:
        return frozenset(_decode(v) for v in value["__fs__"])
    if "__dt__" in value:
        return datetime.fromisoformat(value["__dt__"])
    if "__enum__" in value:
        enum = _ENUMS.get(value["__enum__"])
        if enum is None:
            raise StateError(f"unknown enum {value['__enum__']}")
        return enum(value["v"])
    if "__dc__" in value:
        cls = _DATACLASSES.get(value["__dc__"])
        if cls is None:
            raise StateError(f"unknown type {value['__dc__']}")
        return cls(**{k: _decode(v) for k, v in value.items() if k != "__dc__"})
    raise StateError("unknown object in saved state")


def dumps(history: _state.History) -> str:
    return json.dumps({"version": VERSION, "history": _encode(history)}, separators=(",", ":"))


def loads(text: str) -> _state.History:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise StateError(f"saved state is not JSON: {error}") from error
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise StateError(f"saved state has version {document.get('version')!r}, not {VERSION}")
    history = _decode(document["history"])
    if not isinstance(history, _state.History):
        raise StateError("saved state does not hold a History")
    return history
