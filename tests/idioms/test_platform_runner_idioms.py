"""Idioms of hardware-backend plugins (vllm-ascend's runners and speculators): host attributes set
by a tuple unpacking that mixes `self.x` with other targets, `self.x` reads kept for another host
version behind a version test, and `super()` inside a class defined in a method (its own bases,
not the method's class). Each with its negative twin; whole findings asserted."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

# -- `self.a, self.b, _ = init(...)` in the host --------------------------------------------------

SPECULATOR = """
def init_backend(cfg):
    return [], True, None


class Speculator:
    def set_attn(self, cfg):
        self.cfg = cfg
        {assign}
"""
READS_GROUPS = """
from host.spec import Speculator


class Mine(Speculator):
    def backend(self):
        return self.attn_groups
"""


@pytest.mark.parametrize(("assign", "expected"), [
    ("self.attn_groups, self.support, _ = init_backend(cfg)", ["no PP0051"]),
    ("_, self.attn_groups, *rest = init_backend(cfg)", ["no PP0051"]),
    ("(self.attn_groups, support) = init_backend(cfg)", ["no PP0051"]),
    # negative twins: other names unpacked, or `self.attn_groups` only passed as a keyword argument
    ("self.support, groups, _ = init_backend(cfg)", ["PP0051 error latent"]),
    ("print(\n            self.cfg, attn_groups=1)", ["PP0051 error latent"]),
])
def test_a_mixed_tuple_target_sets_the_host_attribute(assign, expected):
    host = {"host/spec.py": SPECULATOR.format(assign=assign)}
    result = run_scan(host, host, {"plug/spec.py": READS_GROUPS}, checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.subject) == (
            "plug/spec.py", 6, "Mine.backend", "host.spec.Speculator.attn_groups")


# -- `self.x` read only behind a host-version test --------------------------------------------------

SCHEDULER = "class Scheduler:\n    def __init__(self):\n        self.uses_mrope = False\n"
GUARDED = """
from host.sched import Scheduler
from plug.utils import host_version_is


class Mine(Scheduler):
    def schedule(self):
{body}
"""


@pytest.mark.parametrize(("body", "expected", "line"), [
    # code kept for another host release: the member exists there, not on this one
    ("        if host_version_is('0.29.0'):\n            return self.uses_xdrope\n        return self.uses_mrope",
     ["PP0051 warning latent"], 8),
    ("        if host_version_is('0.30.0'):\n            return self.uses_mrope\n        else:\n"
     "            return self.uses_xdrope", ["PP0051 warning latent"], 10),
    # negative twins: an unguarded read of the same member, or a condition that is no version test
    ("        if host_version_is('0.29.0'):\n            return self.uses_xdrope\n        return self.uses_xdrope",
     ["PP0051 error latent"], 9),
    ("        if self.uses_mrope:\n            return self.uses_xdrope\n        return 0", ["PP0051 error latent"], 8),
])
def test_a_member_read_only_behind_a_version_test_is_a_warning(body, expected, line):
    host = {"host/sched.py": SCHEDULER}
    plugin = {"plug/sched.py": GUARDED.format(body=body),
              "plug/utils.py": "def host_version_is(v):\n    return v == '0.29.0'\n"}
    result = run_scan(host, host, plugin, checks=(UndefinedCheck(),))
    expect(result, expected)
    (finding,) = result.findings
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.subject) == (
        "plug/sched.py", line, "Mine.schedule", "host.sched.Scheduler.uses_xdrope")
    warned = finding.level.value == "warning"
    assert finding.details == (("every read runs only behind a version test",) if warned else ())


# -- `super()` in a class defined inside a method ---------------------------------------------------

DECODER = """
class Decoder:
    def forward(self, inputs_embeds, token_type_ids, mask=None):
        return inputs_embeds
"""
NESTED = """
from host.decoder import Decoder
from plug.inner import InnerModel


class Mine(Decoder):
    def build(self):
        class Inner(InnerModel):
            def forward(self, input_ids=None, token_type_ids=None):
                return super().forward(input_ids=input_ids)
        {outer}
        return Inner()
"""


@pytest.mark.parametrize(("outer", "expected"), [
    ("", ["no PP0301"]),  # Inner's super() is InnerModel's forward (a plugin class), not Decoder's
    # negative twin: the method's own `super()` still is the host Decoder's, and misses an argument
    ("super().forward(inputs_embeds=1)", ["PP0301 error latent"]),
])
def test_super_in_a_nested_class_looks_in_its_own_bases(outer, expected):
    host = {"host/decoder.py": DECODER}
    plugin = {"plug/model.py": NESTED.format(outer=outer),
              "plug/inner.py": "class InnerModel:\n    def forward(self, input_ids=None, mask=None):\n        return 0\n"}
    result = run_scan(host, host, plugin, checks=(CallsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0301"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"],
                finding.new.path) == ("plug/model.py", 10, "Mine.build", "token_type_ids", "host/decoder.py")
