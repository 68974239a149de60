from __future__ import annotations

import pytest

from pinport.ledger import FlagKind
from pinport.ledger.flags import flag_host, flag_row

PINS = ("0.8.1", "0.9.2", "0.10.1", "0.11.0", "0.18.0")
S, V, R = FlagKind.STALLED, FlagKind.VANISHED, FlagKind.REVERTED


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # STALLED: changed on every earlier bump (at least two), unchanged on the newest
        (("a", "b", "c", "d", "d"), [S]),
        ((None, "b", "c", "d", "d"), [S]),  # bumps without values on both sides do not count
        (("a", "b", "c", "c", "c"), []),  # one earlier bump was already quiet
        ((None, None, "c", "d", "d"), []),  # only one earlier bump: not yet a pattern
        (("a", "a", "a", "a", "a"), []),
        (("a", "b", "c", "d", "e"), []),  # moved on the newest bump too
        (("a", "b", None, "d", "d"), []),  # the gap leaves one earlier bump with two values
        # VANISHED: present in the previous column, absent in the newest
        (("a", "a", "a", "a", None), [V]),
        (("a", "a", "a", None, None), []),  # already gone before
        ((None, None, None, None, None), []),
        # REVERTED: newest equals an older value but differs from the previous one
        (("a", "a", "b", "b", "a"), [R]),
        (("a", "b", "c", "d", "b"), [R]),
        (("a", "b", "c", None, "a"), []),  # no previous value to differ from
        (("a", "b", "c", "d", "x"), []),
        (("a", "a", "a", "b", "b"), []),
    ],
)
def test_plugin_side_flags(values: tuple, expected: list) -> None:
    assert [f.kind for f in flag_row("p", PINS, values)] == expected


def test_evidence_columns_and_values() -> None:
    (stalled,) = flag_row("p", PINS, (None, "b", "c", "d", "d"))
    assert stalled.columns == ("0.9.2", "0.10.1", "0.11.0", "0.18.0")
    assert stalled.values == ("b", "c", "d", "d")
    (vanished,) = flag_row("p", PINS, ("a", "a", "a", "a", None))
    assert (vanished.columns, vanished.values) == (("0.11.0", "0.18.0"), ("a", None))
    (reverted,) = flag_row("p", PINS, ("a", "b", "b", "c", "b"))
    assert (reverted.columns, reverted.values) == (("0.10.1", "0.11.0", "0.18.0"), ("b", "c", "b"))


def test_one_column_raises_nothing() -> None:
    assert flag_row("p", PINS[:1], ("a",)) == []


@pytest.mark.parametrize(
    ("values", "host", "fires"),
    [
        (("a", "b", "b"), ("x", "y"), True),  # upstream moved, plugin did not
        (("a", "b", "c"), ("x", "y"), False),  # plugin moved too
        (("a", "b", "b"), ("x", "x"), False),  # upstream did not move
        (("a", "b", "b"), (None, "y"), True),  # upstream counterpart appeared
        (("a", None, None), ("x", "y"), False),  # nothing on the plugin side to compare
    ],
)
def test_host_cross_check(values: tuple, host: tuple, fires: bool) -> None:
    flags = flag_host("p", PINS[:3], values, host)
    assert [f.kind for f in flags] == ([FlagKind.HOST_CHANGED] if fires else [])
    if fires:
        assert (flags[0].columns, flags[0].values) == (("0.9.2", "0.10.1"), host)
