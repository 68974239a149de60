"""The registry: stable, unique codes that encode their drift number; every check is reachable;
every kind has tests that expect it as a whole finding and twins that show it absent."""

import ast
import re
from pathlib import Path

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


# -- every kind is asserted, as a whole finding, and shown absent by a twin ----------------------------------
TESTS = Path(__file__).resolve().parents[1]
_OUTCOME = re.compile(r"(PP\d{4}) (error|warning|info) (drift|latent|fixed)\b")
_ABSENT = re.compile(r"no (PP\d{4})")


def _stated() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Codes the tests expect as whole outcomes ("PP0101 error drift") and show absent ("no PP0101"), with where."""
    positive: dict[str, set[str]] = {}
    negative: dict[str, set[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if m := _OUTCOME.fullmatch(node.value.rsplit(" ", 1)[0]) or _OUTCOME.fullmatch(node.value):
                    positive.setdefault(m.group(1), set()).add(path.name)
                elif m := _ABSENT.fullmatch(node.value):
                    negative.setdefault(m.group(1), set()).add(path.name)
    return positive, negative


def test_every_kind_has_a_positive_and_a_negative_case():
    positive, negative = _stated()
    codes = {k.code for k in all_kinds()}
    assert sorted(codes - set(positive)) == [], "kinds no test expects as a whole finding"
    assert sorted(codes - set(negative)) == [], "kinds no twin case shows absent"
    assert sorted(set(positive) | set(negative)) == sorted(codes), "tests name codes the registry lacks"


def test_no_check_test_compares_codes_alone():
    """Check tests assert whole outcomes through `expect`; a bare `.code` comparison hides severity and status."""
    for path in sorted((TESTS / "checks").glob("test_*.py")) + [TESTS / "test_scan.py"]:
        if path.name == "test_registry.py":  # about kinds, not findings
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                attrs = [n for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr == "code"]
                assert not attrs, f"{path.name}:{node.lineno} compares finding codes"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "codes", f"{path.name}:{node.lineno} uses codes()"


def test_each_check_declares_the_drift_numbers_of_its_kinds():
    for check in CHECKS:
        assert set(check.drift) == {k.drift for k in check.kinds if k.drift}, check.name


def test_an_unknown_check_name_is_named_in_the_error():
    import pytest

    from pinport.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown check 'nope'"):
        select_checks(("imports", "nope", "other"))


def test_the_context_a_check_gets_is_read_only():
    from pinport.checks.base import ScanContext

    assert ScanContext.__dataclass_params__.frozen  # checks share it, on both sides of a scan
