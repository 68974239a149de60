"""Forked files and copied lines (#8): a positive and a negative case per kind."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.copied_lines import CopiedLinesCheck
from pinport.checks.forks import ForksCheck
from pinport.findings import Severity
from scenarios import ATTEND, BASE, ENGINE, SECOND_SITE
from scenarios import RESETTING_BACKEND as BACKEND
from scenarios import RESETTING_FORK as FORK

LAYOUT = BACKEND.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
FORK_PATH, SITE_PATH = "plug/tree_backend.py", "plug/kv.py"
CHECKS = (ForksCheck(), CopiedLinesCheck())


def scan(new_backend, fork=FORK, site=SECOND_SITE, new_base=BASE, **settings):
    old = {"host/backend.py": BACKEND, "host/base.py": BASE}
    new = {"host/base.py": new_base, **({"host/backend.py": new_backend} if new_backend else {})}
    return run_scan(old, new, {FORK_PATH: fork, SITE_PATH: site}, checks=CHECKS, **settings)


@pytest.mark.parametrize(("new_backend", "new_base", "expected"), [
    (LAYOUT, BASE, ["PP0801 warning drift", "PP0805 warning drift"]),  # 8: the fork and the second site both carry the old layout
    (BACKEND, BASE, ["no PP0801", "no PP0802", "no PP0803", "no PP0805"]),  # unchanged twin
    (None, BASE, ["PP0803 warning drift"]),  # 8: the forked host file is gone from NEW
    (BACKEND, BASE.replace("reset", "reset_state"), ["PP0802 error drift"]),  # 8: an inherited member is gone
])
def test_fork_kinds(new_backend, new_base, expected):
    expect(scan(new_backend, new_base=new_base), expected)


def test_fork_whose_host_file_is_gone_points_at_the_fork_itself():
    expect(scan(None), ["PP0803 warning drift <module>:1"], at=True)


def test_changed_fork_evidence_and_pending_hunk():
    result = scan(LAYOUT)
    expect(result, ["PP0801 warning drift", "PP0805 warning drift"])
    finding = only(result, "PP0801")
    # placed on the fork's own unit holding the hunk's lines, where the port goes (not on the file)
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == (FORK_PATH, 31, "AttentionImpl.forward")
    assert (finding.old.path, finding.new.path) == ("host/backend.py", "host/backend.py")
    assert finding.subject == "host.backend" and finding.args["name"] == FORK_PATH
    assert finding.args["pending"] == 1 and finding.level is Severity.WARNING
    assert (finding.args["unit"], finding.args["where"]) == ("AttentionImpl.forward", " to `AttentionImpl.forward`")
    assert "-        key_cache, value_cache = kv_cache.unbind(0)" in finding.details
    assert "+        key_cache, value_cache = kv_cache.unbind(1)" in finding.details


def test_fork_already_carrying_the_change_is_info():
    ported = FORK.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)")
    result = scan(LAYOUT, fork=ported)
    expect(result, ["PP0801 info drift", "PP0805 warning drift"])
    finding = only(result, "PP0801")
    assert finding.level is Severity.INFO and finding.args["pending"] == 0


def test_second_site_reports_the_new_form():
    result = scan(LAYOUT)
    expect(result, ["PP0801 warning drift", "PP0805 warning drift"])
    finding = only(result, "PP0805")
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == (SITE_PATH, 6, "write_kv")
    assert finding.plugin.snippet == "k_cache, v_cache = kv_cache.unbind(0)"
    assert finding.old.path == "host/backend.py" and finding.old.snippet.endswith("unbind(0)")
    assert finding.new.snippet == "key_cache, value_cache = kv_cache.unbind(1)"
    assert "kv_cache.unbind(1)" in finding.suggestion
    assert (finding.plugin.column, finding.old.column, finding.new.column) == (0, 0, 0)  # the whole line, each side


@pytest.mark.parametrize("site", [
    SECOND_SITE.replace("unbind(0)", "unbind(1)"),  # already ported
    SECOND_SITE.replace("k_cache, v_cache = kv_cache.unbind(0)", "k_cache = v_cache = kv_cache"),  # no copy
])
def test_second_site_twins(site):
    expect(scan(LAYOUT, site=site), ["PP0801 warning drift"])


def test_removed_line_copied_exactly():
    removed = LAYOUT.replace("        weights = scores.softmax(dim=-1)\n", "")
    site = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-1)\n    return weights\n"
    result = scan(removed, site=site)
    expect(result, ["PP0801 warning drift AttentionImpl.attend:41", "PP0801 warning drift AttentionImpl.forward:31",
                    "PP0805 warning drift write_kv:6", "PP0806 warning drift norm:12"], at=True)
    finding = only(result, "PP0806")
    assert finding.plugin.unit == "norm" and finding.new is None
    expect(scan(LAYOUT, site=site), ["PP0801 warning drift", "PP0805 warning drift", "no PP0806"])  # NEW keeps it


def test_fork_threshold_and_declared_fork():
    # below the threshold the file is no fork, so its own copy of the changed line is a copied line
    unforked = scan(LAYOUT, fork_threshold=0.99)
    expect(unforked, ["PP0805 warning drift AttentionImpl.forward:37", "PP0805 warning drift write_kv:6"], at=True)
    declared = scan(LAYOUT, fork_threshold=0.99, forks=((FORK_PATH, "host/backend.py"),))
    expect(declared, ["PP0801 warning drift", "PP0805 warning drift", "no PP0804"])
    assert only(declared, "PP0801").args["name"] == FORK_PATH


def test_declared_fork_that_does_not_exist():
    result = scan(BACKEND, forks=(("plug/nope.py", "host/backend.py"),))
    expect(result, ["PP0804 warning drift"])
    finding = only(result, "PP0804")
    assert finding.args["name"] == "plug/nope.py" and finding.level is Severity.WARNING
    # neither side exists: one finding, naming the plugin's side first
    both = scan(BACKEND, forks=(("plug/nope.py", "host/nope.py"),))
    expect(both, ["PP0804 warning drift"])
    assert (only(both, "PP0804").args["name"], only(both, "PP0804").args["label"]) == ("plug/nope.py", "plugin")


def test_removed_inherited_member_evidence():
    result = scan(BACKEND, new_base=BASE.replace("reset", "reset_state"))
    expect(result, ["PP0802 error drift"])
    finding = only(result, "PP0802")
    assert finding.args["name"] == "reset" and "reset_state" in finding.args["rename"]
    assert finding.plugin.path == FORK_PATH and finding.plugin.unit == "AttentionImpl.forward"
    assert finding.old.path == "host/base.py" and finding.new.path == "host/base.py"


# A line copied into a patched method is judged against that member upstream, never against an
# unrelated host file with a similar line (the short generic line of the real job's scheduler patch).
SCHED = """
class Scheduler:
    def update(self, out, spec):
        for rid in out:
            cur = len(spec.get(rid, ()))
            self.placeholders += 1 + cur
"""
UTILS = "\n\ndef rows(spec, rid):\n    n = len(spec.get(rid, ()))\n    return n\n"
SCHED_PATCH = """
from plug.patching import ArcticPatch
from host.sched import Scheduler
from host.utils import rows


class SchedPatch(ArcticPatch[Scheduler]):
    def update(self, out, spec):
        hard_off = self.limit(len(out)) == 0
        count = 0
        for rid in out:
            request = self.requests[rid]
            if request.prefill:
                continue
            cur = len(spec.get(rid, ()))
            request.scheduled = cur
            self.placeholders += 1 + cur + rows(spec, rid)
            count += 0 if hard_off else 1
        self.count = count
"""


def _sched_scan(new_sched: str = SCHED, new_utils: str = UTILS.replace("n = len", "n = 1 + len")):
    old = {"host/sched.py": SCHED, "host/utils.py": UTILS}
    new = {"host/sched.py": new_sched, "host/utils.py": new_utils}
    plugin = {"plug/sched.py": SCHED_PATCH, "plug/patching.py": "class ArcticPatch:\n    pass\n"}
    return run_scan(old, new, plugin, checks=(CopiedLinesCheck(),))


def test_copied_line_is_judged_in_the_patched_members_counterpart():
    # upstream's own update() keeps the line; utils.py's similar line changing is no reason to report
    expect(_sched_scan(), ["no PP0805", "no PP0806"])
    changed = _sched_scan(new_sched=SCHED.replace("cur = len(spec.get(rid, ()))", "cur = len(spec.get(rid, []))"))
    expect(changed, ["PP0805 warning drift SchedPatch.update:14"], at=True)
    finding = only(changed, "PP0805")
    assert (finding.old.path, finding.old.line, finding.new.path, finding.new.line) == (
        "host/sched.py", 4, "host/sched.py", 4)
    assert finding.new.snippet == "cur = len(spec.get(rid, []))"


EMBEDDING = """
class Embedding:
    def __init__(self, num, org):
        self.num = num
        self.org = org
        self.added = self.num - self.org
        self.padded = pad(self.org)
"""
EMBEDDING_MOVED = """
class Embedding:
    def __init__(self, num, org):
        self.num = num
        self.org = org or num
        self.added = num - self.org
        self.padded = pad(self.org, self.added)
"""
PLUGIN_EMBEDDING = """
from host.embedding import pad


class Embedding:
    def __init__(self, num, org):
        self.num = num
        self.org = org
        self.padded = pad(self.org)
        self.added = self.num - self.org
"""


def test_line_moved_and_rewritten_in_place_is_not_removed():
    # upstream moved `self.added = ...` and now reads the local `num` it stores as `self.num`: one value
    old, new = {"host/embedding.py": EMBEDDING}, {"host/embedding.py": EMBEDDING_MOVED}
    result = run_scan(old, new, {"plug/embedding.py": PLUGIN_EMBEDDING}, checks=(CopiedLinesCheck(),))
    expect(result, ["PP0805 warning drift Embedding.__init__:8", "no PP0806"], at=True)
    assert only(result, "PP0805").new.snippet == "self.padded = pad(self.org, self.added)"


LOGITS = """
class Logits:
    def forward(self, head, hidden):
        logits = self._get_logits(hidden, head)
        return logits

    def _get_logits(self, hidden, head):
        return hidden @ head
"""
STANDALONE_LOGITS = """
from host.logits import Logits as _Unused


class FastLogits:
    def run(self, head, hidden):
        logits = self._get_logits(hidden, head)
        return logits

    def _get_logits(self, hidden, head):
        return hidden @ head.T
"""


@pytest.mark.parametrize(("plugin", "expected"), [
    (STANDALONE_LOGITS, ["no PP0805"]),  # the plugin's class calls its own _get_logits
    (STANDALONE_LOGITS.replace("    def _get_logits(self, hidden, head):\n        return hidden @ head.T\n", ""),
     ["PP0805 warning drift"]),  # twin: without its own method the copied call follows upstream's
])
def test_call_on_the_plugins_own_method_follows_the_plugin(plugin, expected):
    new = {"host/logits.py": LOGITS.replace("self._get_logits(hidden, head)", "self._get_logits(hidden, head, True)")
           .replace("(self, hidden, head):", "(self, hidden, head, skip=False):")}
    expect(run_scan({"host/logits.py": LOGITS}, new, {"plug/fast.py": plugin}, checks=(CopiedLinesCheck(),)),
           expected)


def test_unit_upstream_deleted_and_the_fork_keeps_is_info():
    # upstream drops AttentionImpl.attend (forward inlines something else): the fork keeps its own
    attend = BACKEND[BACKEND.index("\n    def attend("):]
    dropped = scan(BACKEND.replace(attend, "\n"))
    expect(dropped, ["PP0801 info drift AttentionImpl.attend:41"], at=True)
    assert only(dropped, "PP0801").suggestion.startswith("nothing to port: upstream removed")
    # twin: upstream rewrites it instead, and the fork has to follow
    rewritten = scan(BACKEND.replace("        weights = scores.softmax(dim=-1)\n", "        weights = scores.sigmoid()\n"))
    expect(rewritten, ["PP0801 warning drift AttentionImpl.attend:41"], at=True)


# A host module the plugin both imports from and patches is one it touches: a plain function copying a
# line of it follows the change too.
PATCHED_ENGINE = """
from plug.patching import ArcticPatch
from host.engine import Engine


class EnginePatch(ArcticPatch[Engine]):
    def compute(self, item):
        return item + 3


def first_values(engine, batch):
    for item in batch:
        value = engine.compute(item)
        return value
"""


def test_copied_line_of_a_module_the_plugin_imports_and_patches():
    new = ENGINE.replace("value = self.compute(item)", "value = self.compute(item, self.config)")
    plugin = {"plug/engine_patch.py": PATCHED_ENGINE, "plug/patching.py": "class ArcticPatch:\n    pass\n"}
    result = run_scan({"host/engine.py": ENGINE}, {"host/engine.py": new}, plugin, checks=(CopiedLinesCheck(),))
    expect(result, ["PP0805 warning drift first_values:12"], at=True)
    finding = only(result, "PP0805")
    assert (finding.old.path, finding.new.snippet) == ("host/engine.py", "value = self.compute(item, self.config)")
    expect(run_scan({"host/engine.py": ENGINE}, {"host/engine.py": ENGINE}, plugin, checks=(CopiedLinesCheck(),)),
           ["no PP0805"])


# A host file the plugin forks and, through a subclass's patch, mirrors a method of, without importing it:
# a third file's copy of one of its lines is still judged.
SUB = "from host.backend import AttentionImpl\n\n\nclass TreeImpl(AttentionImpl):\n    pass\n"
# the plugin's copy of the inherited AttentionImpl.attend, scaling its result
SUB_PATCH = ("from plug.patching import ArcticPatch\nfrom host.tree import TreeImpl\n\n\n"
             "class TreeImplPatch(ArcticPatch[TreeImpl]):\n" + ATTEND.replace("[:lengths]\n", "[:lengths] * 2\n"))
UNIMPORTED_SITE = """
def write_kv(layer, key, slots):
    kv_cache = layer.kv_cache
    k_cache, v_cache = kv_cache.unbind(0)
    k_cache.index_copy_(0, slots, key)
    return k_cache
"""


def test_copied_line_of_a_module_forked_and_mirrored_only():
    old = {"host/backend.py": BACKEND, "host/base.py": BASE, "host/tree.py": SUB}
    plugin = {FORK_PATH: FORK, "plug/tree_patch.py": SUB_PATCH, SITE_PATH: UNIMPORTED_SITE,
              "plug/patching.py": "class ArcticPatch:\n    pass\n"}
    result = run_scan(old, {**old, "host/backend.py": LAYOUT}, plugin, checks=(CopiedLinesCheck(),))
    expect(result, ["PP0805 warning drift write_kv:3"], at=True)
    assert only(result, "PP0805").old.path == "host/backend.py"


REGISTER = {"plug/register.py": "from plug.tree_backend import AttentionImpl\n\nIMPLS = [AttentionImpl]\n"}


@pytest.mark.parametrize(("new_backend", "expected"), [
    # upstream changed `BackendOptions`, which the fork keeps but no plugin code hands on: nothing to port
    (BACKEND.replace("        self.block_size = block_size\n", "        self.block_size = block_size or 16\n"),
     ["no PP0801"]),
    (LAYOUT, ["PP0801 warning drift AttentionImpl.forward:31"]),  # twin: the class the plugin registers
])
def test_hunks_in_a_fork_class_nothing_uses_are_left_out(new_backend, expected):
    old = {"host/backend.py": BACKEND, "host/base.py": BASE}
    new = {"host/backend.py": new_backend, "host/base.py": BASE}
    result = run_scan(old, new, {FORK_PATH: FORK, **REGISTER}, checks=(ForksCheck(),))
    expect(result, expected, at=True)


# A rewritten line's new form is not a line NEW kept from OLD next to it: between the same anchors,
# `and param.data.numel() == 1` shares more tokens with `param.data.copy_(loaded)` than its real new
# form `copy_into(param.data, loaded)` does. (The lines around are not unique in the file, so the
# window between anchors holds both.)
LOADER = """
def load(param, loaded, dim):
    if dim is None:
        if (
            loaded.ndim == 0
            and param.data.numel() == 1
        ):
            loaded = loaded.reshape(1)
        param.data.copy_(loaded)
        return


def load_twin(param, loaded, dim):
    if dim is None:
        if (
            loaded.ndim == 0
            and param.data.numel() == 1
        ):
            loaded = loaded.reshape(1)
        param.copy_(loaded)
        return
"""
PLUGIN_LOADER = """
from host.loader import load


def my_load(param, loaded):
    param.data.copy_(loaded)
    return param
"""


@pytest.mark.parametrize(("new_line", "expected"), [
    ("copy_into(param.data, loaded)", "copy_into(param.data, loaded)"),  # rewritten: its new form
    ("param.data.copy_(loaded, non_blocking=True)", "param.data.copy_(loaded, non_blocking=True)"),  # twin
])
def test_new_form_of_a_changed_line_is_not_a_kept_neighbour(new_line, expected):
    new = LOADER.replace("        param.data.copy_(loaded)\n", f"        {new_line}\n")
    result = run_scan({"host/loader.py": LOADER}, {"host/loader.py": new}, {"plug/load.py": PLUGIN_LOADER},
                      checks=(CopiedLinesCheck(),))
    expect(result, ["PP0805 warning drift my_load:5"], at=True)
    finding = only(result, "PP0805")
    assert (finding.old.line, finding.new.line, finding.new.snippet) == (8, 8, expected)
    assert finding.suggestion == f"port the line as upstream did: `{expected}`"


# A line copied from a host module NEW no longer has at all is context: nothing to port line by line,
# and the module's own finding (here the plugin's import of it) carries the break.
RUNNER = """
def prepare(sampled, lengths):
    max_gen_len = sampled.shape[-1]
    return lengths[:max_gen_len]
"""
PLUGIN_RUNNER = """
from host.runner import prepare


def my_prepare(sampled, lengths):
    max_gen_len = sampled.shape[-1]
    return lengths[:max_gen_len] + 1
"""


@pytest.mark.parametrize(("new", "expected"), [
    ({}, "info"),  # the whole module is gone
    ({"host/runner.py": "def prepare(sampled, lengths):\n    return lengths\n"}, "warning"),  # twin: the line is
])
def test_line_of_a_module_gone_from_new_is_context(new, expected):
    result = run_scan({"host/runner.py": RUNNER}, {"host/other.py": "X = 1\n", **new},
                      {"plug/prepare.py": PLUGIN_RUNNER}, checks=(CopiedLinesCheck(),))
    expect(result, [f"PP0806 {expected} drift my_prepare:5"], at=True)
    finding = only(result, "PP0806")
    assert (finding.old.path, finding.old.line, finding.new) == ("host/runner.py", 2, None)
    assert any("has no module `host.runner` at all" in d for d in finding.details) is (expected == "info")


# The same inside a counterpart (a plugin class copying the same-named host class): the rewrite of
# a copied line is looked for among the lines the OLD member lacks, never among the ones it keeps.
EMBEDDING_LOADER = """
def pad(x):
    return x


class Embedding:
    def weight_loader(self, param, loaded):
        if (
            loaded.ndim == 0
            and param.data.numel() == 1
        ):
            loaded = loaded.reshape(1)
        param.data.copy_(loaded)
"""
PLUGIN_EMBEDDING_LOADER = """
from host.loader import pad


class Embedding:
    def weight_loader(self, param, loaded):
        param.data.copy_(pad(loaded))
        param.data.copy_(loaded)
"""


@pytest.mark.parametrize("new_line", ["copy_into(param.data, loaded)", "param.data.copy_(loaded, non_blocking=True)"])
def test_rewrite_in_the_counterpart_is_not_a_kept_line(new_line):
    new = EMBEDDING_LOADER.replace("        param.data.copy_(loaded)\n", f"        {new_line}\n")
    result = run_scan({"host/loader.py": EMBEDDING_LOADER}, {"host/loader.py": new},
                      {"plug/emb.py": PLUGIN_EMBEDDING_LOADER}, checks=(CopiedLinesCheck(),))
    expect(result, ["PP0805 warning drift Embedding.weight_loader:7"], at=True)
    finding = only(result, "PP0805")
    assert (finding.old.line, finding.new.line, finding.new.snippet) == (12, 12, new_line)
