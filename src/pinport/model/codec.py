"""Summaries to and from JSON: the index cache holds data only, never pickle or anything that can run code.

A record (NamedTuple or dataclass) is stored as the list of its field values, an IntEnum as its
number, a dict as an object; decoding is driven by the records' own type hints, so a field added
to `summary.py` is stored without touching this module. A value of the wrong shape raises
`DecodeError`, and the caller rebuilds that row from the source file.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable
from typing import Any

Decode = Callable[[Any], Any]


class DecodeError(ValueError):
    """A stored value that is not what its type declares (damaged, edited, or from other code)."""


def encode(value: object) -> bytes:
    """Compact JSON of a summary (or any value built from records, enums, dicts, tuples, scalars).

    JSON's C encoder already writes NamedTuples and tuples as lists, IntEnums as numbers; only
    dataclass records need turning into the list of their fields.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_fields_of)
    return text.encode("utf-8", "surrogatepass")  # a string constant may hold a lone surrogate


def decode(data: bytes | str, kind: type) -> Any:
    """The `kind` value `data` encodes; DecodeError when it does not decode to one."""
    try:
        raw = json.loads(data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data)
    except (ValueError, TypeError, RecursionError) as exc:
        raise DecodeError(f"not JSON: {exc}") from None
    build = decoder(kind)
    try:
        return raw if build is None else build(raw)
    except DecodeError:
        raise
    except (TypeError, ValueError, AttributeError, IndexError, KeyError, RecursionError) as exc:
        raise DecodeError(f"not a {kind.__name__}: {type(exc).__name__}: {exc}") from None


def _fields_of(value: object) -> list:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    raise TypeError(f"cannot store a {type(value).__name__} in the index")


_DECODERS: dict[object, Decode | None] = {}
_SCALARS = (str, int, float, bool, type(None))


def decoder(kind: object) -> Decode | None:
    """The function turning decoded JSON into a `kind` value (built once per type); None when
    JSON's own value already is one (a scalar, a scalar or None): records then keep it as it is.

    Scalars are not type-checked one by one (that doubled the cost of a warm scan); every
    structure is (list lengths, objects, enum members), so a damaged row fails to decode.
    """
    if kind not in _DECODERS:
        _DECODERS[kind] = _build(kind)
    return _DECODERS[kind]


def _build(kind: Any) -> Decode | None:
    if kind in _SCALARS:
        return None
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        members = {m.value: m for m in kind}

        def member(value: Any) -> enum.Enum:
            try:
                return members[value]
            except (KeyError, TypeError):
                raise DecodeError(f"{value!r} is no {kind.__name__}") from None
        return member
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise TypeError(f"cannot store {kind}: only `X | None` unions are supported")
        inner = decoder(options[0])
        if inner is None:
            return None
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = decoder(args[0])
            if item is None:
                return lambda value: tuple(_list(value))
            return lambda value: tuple([item(v) for v in _list(value)])
        items = [decoder(a) for a in args]

        def fixed(value: Any) -> tuple:
            value = _list(value)
            if len(value) != len(items):
                raise DecodeError(f"expected {len(items)} items, found {len(value)}")
            return tuple([v if d is None else d(v) for d, v in zip(items, value, strict=True)])
        return fixed
    if origin is list:
        item = decoder(args[0])
        if item is None:
            return _list
        return lambda value: [item(v) for v in _list(value)]
    if origin is dict:
        item = decoder(args[1])

        def mapping(value: Any) -> dict:
            if type(value) is not dict:
                raise DecodeError(f"expected an object, found {type(value).__name__}")
            return value if item is None else {k: item(v) for k, v in value.items()}
        return mapping
    if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or hasattr(kind, "_fields")):
        return _record(kind)
    raise TypeError(f"cannot store {kind} in the index")


def _list(value: Any) -> list:
    if type(value) is not list:
        raise DecodeError(f"expected a list, found {type(value).__name__}")
    return value


def _record(kind: type) -> Decode:
    """A record from the list of its fields; field decoders are built on first use (records nest)."""
    names = [f.name for f in dataclasses.fields(kind)] if dataclasses.is_dataclass(kind) else list(kind._fields)
    plan: list[tuple[int, Decode]] = []  # (position, decoder) of each field that is not a plain scalar
    ready: list[bool] = []

    def record(value: Any) -> Any:
        if not ready:
            hints = typing.get_type_hints(kind)
            plan.extend((i, d) for i, name in enumerate(names) if (d := decoder(hints[name])) is not None)
            ready.append(True)
        if type(value) is not list or len(value) != len(names):
            raise DecodeError(f"{kind.__name__} has {len(names)} fields, found {_shape(value)}")
        for i, d in plan:
            value[i] = d(value[i])
        return kind(*value)
    return record


def _shape(value: Any) -> str:
    return f"{len(value)}" if isinstance(value, list) else type(value).__name__
