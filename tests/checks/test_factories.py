"""Keywords forwarded through a host factory's **kwargs to a constructor (#7)."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.factories import FactoriesCheck

USE = "plug/use.py"

META = """
class Metadata:
    def __init__(self, query_start_loc, seq_lens{extra}):
        pass

    @classmethod
    def create(cls, query_start_loc, **kwargs):
        return cls(query_start_loc=query_start_loc, **kwargs)


def make_metadata(**kwargs):
    return Metadata(**kwargs)


class Other:
    @staticmethod
    def build(**kwargs):
        return dict(**kwargs)
"""
OLD = {"host/meta.py": META.format(extra=", seq_lens_cpu=None")}
NEW = {"host/meta.py": META.format(extra="")}


@pytest.mark.parametrize(("call", "expected"), [
    # the classmethod passes **kwargs to cls(...): NEW's constructor no longer takes seq_lens_cpu
    ("Metadata.create(1, seq_lens=2, seq_lens_cpu=3)", ["PP0707 error drift go:5"]),
    ("Metadata.create(1, seq_lens=2)", ["no PP0707"]),
    # a module factory building the class by name
    ("make_metadata(query_start_loc=1, seq_lens=2, seq_lens_cpu=3)", ["PP0707 error drift go:5"]),
    ("make_metadata(query_start_loc=1, seq_lens=2)", ["no PP0707"]),
    # a factory forwarding to something that is not a host class: not judged
    ("Other.build(seq_lens_cpu=3)", ["no PP0707"]),
])
def test_forwarded_keywords(call, expected):
    plugin = f"from host.meta import Metadata, Other, make_metadata\n\n\ndef go():\n    return {call}\n"
    expect(run_scan(OLD, NEW, {USE: plugin}, checks=(FactoriesCheck(),)), expected, at=True)


def test_evidence_names_the_constructor_and_the_forwarding_line():
    plugin = "from host.meta import Metadata\n\n\ndef go():\n    return Metadata.create(1, seq_lens=2, seq_lens_cpu=3)\n"
    finding = only(run_scan(OLD, NEW, {USE: plugin}, checks=(FactoriesCheck(),)), "PP0707")
    assert finding.args == {"factory": "host.meta.Metadata.create", "name": "seq_lens_cpu",
                            "callee": "host.meta.Metadata", "label": "host 2.0"}
    assert "seq_lens_cpu" in finding.old.snippet and "seq_lens_cpu" not in finding.new.snippet
    assert finding.details == ("host 2.0: `host.meta.Metadata.create` passes its **kwargs on at host/meta.py:7",)


def test_a_subclass_receiver_builds_the_subclass():
    host = META.format(extra="") + "\n\nclass Wide(Metadata):\n    def __init__(self, query_start_loc, seq_lens{x}):\n" \
                                   "        pass\n"
    plugin = "from host.meta import Wide\n\n\ndef go():\n    return Wide.create(1, seq_lens=2, width=3)\n"
    result = run_scan({"host/meta.py": host.format(x=", width=0")}, {"host/meta.py": host.format(x="")}, {USE: plugin},
                      checks=(FactoriesCheck(),))
    expect(result, ["PP0707 error drift"])
    assert only(result, "PP0707").args["callee"] == "host.meta.Wide"


DESC = "from dataclasses import dataclass\n\n\n@dataclass\nclass Descriptor:\n    num_tokens: int\n{fields}"


@pytest.mark.parametrize(("call", "expected"), [
    # dataclasses.replace takes the dataclass's fields: NEW dropped `uniform`
    ("replace(desc, uniform=False)", ["PP0707 error drift go:7"]),
    ("replace(desc, num_reqs=None)", ["no PP0707"]),
    ("dataclasses.replace(desc, uniform=False)", ["PP0707 error drift go:7"]),
])
def test_dataclasses_replace(call, expected):
    old = {"host/desc.py": DESC.format(fields="    num_reqs: int = 0\n    uniform: bool = False\n")}
    new = {"host/desc.py": DESC.format(fields="    num_reqs: int = 0\n")}
    plugin = ("import dataclasses\nfrom dataclasses import replace\nfrom host.desc import Descriptor\n\n\n"
              f"def go(desc: Descriptor):\n    return {call}\n")
    expect(run_scan(old, new, {USE: plugin}, checks=(FactoriesCheck(),)), expected, at=True)
