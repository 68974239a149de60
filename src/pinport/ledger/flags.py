"""Anomaly flags: advisory signs that the newest pin broke the trajectory of the earlier ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

# A pattern needs repeating: one earlier change followed by a quiet bump is ordinary.
STALLED_MIN_BUMPS = 2


class FlagKind(StrEnum):
    STALLED = "STALLED"  # changed on every earlier bump, unchanged on the newest: a missed port?
    VANISHED = "VANISHED"  # present in the previous column, absent in the newest
    REVERTED = "REVERTED"  # the newest equals an older value but differs from the previous one
    HOST_CHANGED = "HOST_CHANGED"  # upstream counterpart changed on the newest bump, plugin did not


@dataclass(frozen=True)
class Flag:
    """One anomaly of one probe; `columns` are the evidence pins, `values` their values in order."""

    kind: FlagKind
    probe: str
    columns: tuple[str, ...]
    values: tuple[str | None, ...]


def _bumps(values: Sequence[str | None]) -> list[tuple[int, bool]]:
    """(index of the newer column, changed?) for each bump with a value on both sides."""
    return [
        (i, values[i - 1] != values[i])
        for i in range(1, len(values))
        if values[i - 1] is not None and values[i] is not None
    ]


def flag_row(label: str, pins: Sequence[str], values: Sequence[str | None]) -> list[Flag]:
    """The plugin-side flags of one probe row, `values` aligned with `pins` (oldest first)."""
    if len(values) < 2:
        return []
    flags = []
    last, prev = len(values) - 1, len(values) - 2
    newest, previous = values[last], values[prev]
    bumps = _bumps(values)
    earlier = [(i, changed) for i, changed in bumps if i < last]
    if (
        newest is not None
        and previous is not None
        and newest == previous
        and len(earlier) >= STALLED_MIN_BUMPS
        and all(changed for _, changed in earlier)
    ):
        evidence = sorted({j for i, _ in earlier for j in (i - 1, i)} | {prev, last})
        flags.append(_flag(FlagKind.STALLED, label, pins, values, evidence))
    if previous is not None and newest is None:
        flags.append(_flag(FlagKind.VANISHED, label, pins, values, [prev, last]))
    if newest is not None and previous is not None and newest != previous:
        older = [j for j in range(prev) if values[j] == newest]
        if older:
            flags.append(_flag(FlagKind.REVERTED, label, pins, values, [older[-1], prev, last]))
    return flags


def flag_host(
    label: str,
    pins: Sequence[str],
    values: Sequence[str | None],
    host_values: tuple[str | None, str | None],
) -> list[Flag]:
    """HOST_CHANGED when the upstream counterpart moved between the last two pins and the plugin did not.

    `host_values` are the counterpart's values at the previous and the newest pin.
    """
    if len(values) < 2 or host_values[0] == host_values[1]:
        return []
    previous, newest = values[-2], values[-1]
    if previous is None or previous != newest:
        return []
    return [Flag(FlagKind.HOST_CHANGED, label, (pins[-2], pins[-1]), host_values)]


def _flag(
    kind: FlagKind,
    label: str,
    pins: Sequence[str],
    values: Sequence[str | None],
    evidence: Sequence[int],
) -> Flag:
    return Flag(kind, label, tuple(pins[i] for i in evidence), tuple(values[i] for i in evidence))
