"""Discovery of per-release copies picked by version (vllm-beam-search-plugin's `vendored_scheduler_v0261.py`
and the `_select_vendored_schedule` branches choosing one): the selector, each branch's version test as
data, and what follows when no branch is taken. With negative twins; findings in tests/checks/test_release_copies.py."""

from __future__ import annotations

import pytest

from harness import load_inline_models
from pinport.plugin.release_copies import admits, find_selectors, version_of

SELECT = """
from importlib import import_module

from host.sched import Scheduler


def pick(version_tuple, names):
    release = version_tuple[:3]
    if release == (0, 26, 0):
        return ".vendored_v026"
    elif "budget" in names and release >= (0, 26, 1):
        from .vendored_v0261 import schedule_v0261
        return schedule_v0261
    raise RuntimeError("unsupported")
"""
COPIES = {"plug/vendored_v026.py": "def schedule_v026(self):\n    pass\n",
          "plug/vendored_v0261.py": "def schedule_v0261(self):\n    pass\n"}


def _selectors(select: str, copies: dict[str, str] = COPIES):
    host = {"host/sched.py": "class Scheduler:\n    def schedule(self):\n        pass\n"}
    with load_inline_models(host, host, {"plug/adapter.py": select, **copies}) as (models, _):
        return find_selectors(models.plugin, "host")


def test_the_selector_its_branches_and_the_copies_original():
    (selector,) = _selectors(SELECT)
    assert (selector.module, selector.qualname, selector.line, selector.stem) == ("plug.adapter", "pick", 6,
                                                                                 "plug.vendored")
    assert selector.copies == ("plug.vendored_v026", "plug.vendored_v0261")
    assert [(b.module, b.line, b.text, b.test) for b in selector.branches] == [
        ("plug.vendored_v026", 8, "release == (0, 26, 0)", ("cmp", "==", (0, 26, 0))),
        ("plug.vendored_v0261", 10, "'budget' in names and release >= (0, 26, 1)",
         ("and", (("?",), ("cmp", ">=", (0, 26, 1)))))]
    assert (selector.fallthrough_line, selector.raises) == (13, True)
    assert selector.originals == ("host.sched.Scheduler.schedule",)


@pytest.mark.parametrize(("select", "copies"), [
    (SELECT.replace('return ".vendored_v026"', "return None"), COPIES),  # one branch names a copy: no selector
    (SELECT, {"plug/vendored_v026.py": "X = 1\n"}),  # one copy only: `_v026` alone may mean anything
])
def test_no_selector(select, copies):
    assert _selectors(select, copies) == ()


@pytest.mark.parametrize(("test", "version", "verdict"), [
    (("cmp", "==", (0, 26, 1)), (0, 26, 1), True),
    (("cmp", "==", (0, 26, 1)), (0, 28, 0), False),
    (("cmp", ">=", (0, 26)), (0, 28, 0), True),  # compared on the bound's length
    (("and", (("?",), ("cmp", "==", (0, 26, 0)))), (0, 28, 0), False),  # one false term decides
    (("and", (("?",), ("cmp", "==", (0, 28, 0)))), (0, 28, 0), None),  # the probe decides: unknown
    (("or", (("?",), ("cmp", "==", (0, 26, 0)))), (0, 28, 0), None),
    (("not", (("cmp", "<", (0, 27)),)), (0, 28, 0), True),
])
def test_a_branch_admits_a_version(test, version, verdict):
    assert admits(test, version) is verdict


def test_versions_from_releases_and_labels():
    assert (version_of("0.28.0"), version_of("0.24.0+cpu"), version_of("~/vllm@v0.26.1"), version_of("main")) == (
        (0, 28, 0), (0, 24, 0), (0, 26, 1), ())
