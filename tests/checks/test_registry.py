"""The registry: stable, unique codes that encode their drift number; every check is reachable."""

from pinport import checks
from pinport.checks import CHECKS, select_checks
from pinport.scan import CHECK_CRASHED, PLUGIN_SYNTAX_ERROR


def all_kinds():
    return [k for c in CHECKS for k in c.kinds] + [PLUGIN_SYNTAX_ERROR, CHECK_CRASHED]


def test_codes_are_unique():
    codes = [k.code for k in all_kinds()]
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)


def test_codes_encode_the_drift_number():
    for kind in all_kinds():
        assert kind.code.startswith("PP") and len(kind.code) == 6 and kind.code[2:].isdigit(), kind
        assert kind.code[2:4] == (f"{kind.drift:02d}" if kind.drift else "00"), kind


def test_each_kind_belongs_to_its_check():
    for check in CHECKS:
        assert check.kinds, check.name
        assert {k.check for k in check.kinds} == {check.name}, check.name


def test_every_catalogue_drift_has_a_check():
    covered = {d for c in CHECKS for d in c.drift}
    assert covered == set(range(1, 13))


def test_selection_keeps_registry_order():
    names = [c.name for c in CHECKS]
    assert [c.name for c in select_checks(tuple(reversed(names[:3])))] == names[:3]
    assert len(names) == len(set(names))


def test_public_names():
    assert set(checks.__all__) == {"CHECKS", "Check", "ScanContext", "select_checks"}
