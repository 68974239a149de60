"""The registry: stable, unique codes that encode their drift number; every check is reachable;
every kind has tests that expect it as a whole finding and twins that show it absent."""

import ast
import re
from pathlib import Path

import pytest

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


# Tests that may name findings by code alone, and why: they test something else than what a check finds.
CODES_ALONE_ALLOWED = {
    "checks/test_registry.py": "about the kinds, not about findings",
    "report/": "renders a given list of findings: the code is the row's name",
    "real/test_html_real.py": "the report shows every finding: rows matched by code",
    "real/test_report_real.py": "the SARIF rules match the codes present",
    "reliability/": "asserts only that bad input never crashes a check",
    "rebase/test_pins.py": "which pin edit was made",
    "real/test_rebase_real.py": "the errors a rebase leaves, filtered to errors beforehand",
    "real/test_other_plugins.py": "the errors left against an answer key of (code, place)",
}


def _attributes(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _codes_alone(node: ast.AST) -> bool:
    """`f.code`, or a comprehension of codes that does not also state severity and status."""
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        return "code" in _attributes(node.elt) and not {"level", "status"} <= _attributes(node.elt)
    return isinstance(node, ast.Attribute) and node.attr == "code"


def codes_alone_comparisons(source: str) -> list[int]:
    """Lines of asserts that compare finding codes without severity and status, and calls of a `codes()` helper.
    A code inside a comprehension's filter picks findings; it compares nothing."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert) and not {"level", "status"} <= _attributes(node.test):
            filters = {id(n) for c in ast.walk(node.test) if isinstance(c, ast.comprehension)
                       for f in c.ifs for n in ast.walk(f)}
            if any(isinstance(c, ast.Compare) and id(c) not in filters and
                   any(_codes_alone(o) for o in (c.left, *c.comparators)) for c in ast.walk(node.test)):
                lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.strip("_") == "codes":
            lines.append(node.lineno)
    return lines


def test_no_check_test_compares_codes_alone():
    """Tests assert whole outcomes (through `expect`, or code, severity and status together): a bare
    code comparison hides a severity downgrade or a drift/latent flip."""
    offenders = []
    for path in sorted(TESTS.rglob("test_*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if any(rel.startswith(allowed) for allowed in CODES_ALONE_ALLOWED):
            continue
        offenders += [f"{rel}:{line}" for line in codes_alone_comparisons(path.read_text(encoding="utf-8"))]
    assert offenders == []


@pytest.mark.parametrize(("source", "flagged"), [
    ("assert [f.code for f in r.findings] == ['PP0101']", [1]),
    ("assert {f.code for f in r.findings} >= {'PP0101'}", [1]),
    ("assert r.findings[0].code == 'PP0101'", [1]),
    ("assert [(f.code, f.subject) for f in r.findings] == [('PP0101', 'x')]", [1]),
    ("assert codes(r) == ['PP0101']", [1]),
    # whole findings, and codes that only pick findings, are fine
    ("assert [(f.code, f.level, f.status) for f in r.findings] == [('PP0101', E, D)]", []),
    ("assert not [f for f in r.findings if f.code == 'PP0005']", []),
    ("assert next(f for f in r.findings if f.code == 'PP0101').line == 3", []),
])
def test_codes_alone_comparisons_are_found(source, flagged):
    assert codes_alone_comparisons(source) == flagged


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
