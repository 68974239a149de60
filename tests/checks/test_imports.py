"""Imports (#4 moved, #5 renamed, #6 removed) and host attribute reads."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.imports import ImportsCheck

CHECK = (ImportsCheck(),)


def scan(old: dict, new: dict, plugin_src: str):
    return run_scan(old, new, {"plug/use.py": plugin_src}, checks=CHECK)


def test_moved_name_points_to_its_new_module():
    old = {"host/utils/torch_utils.py": "def is_quantized(x):\n    return x\n"}
    new = {"host/utils/torch_utils.py": "X = 1\n", "host/kv.py": "def is_quantized(x):\n    return x\n"}
    result = scan(old, new, "from host.utils.torch_utils import is_quantized\n")
    expect(result, ["PP0402 error drift"])
    finding = only(result, "PP0402")
    assert finding.args["where"] == "host.kv.is_quantized"
    assert finding.old.path == "host/utils/torch_utils.py" and finding.old.line == 1
    assert finding.new.path == "host/kv.py"
    assert finding.plugin.line == 1 and finding.status.value == "drift"


def test_renamed_name_is_suggested_by_definition_similarity():
    old = {"host/fa.py": "def flash_attn_supports_fp8(device, dtype):\n    return True\n"}
    new = {"host/fa.py": "def flash_attn_supports_quant_query_input(device, dtype):\n    return True\n"}
    result = scan(old, new, "from host.fa import flash_attn_supports_fp8\n")
    expect(result, ["PP0501 error drift"])
    finding = only(result, "PP0501")
    assert finding.args["candidate"] == "flash_attn_supports_quant_query_input"
    assert finding.new.line == 1


def test_removed_helper_shows_what_the_old_place_has():
    old = {"host/batch.py": "def vllm_is_batch_invariant():\n    return False\n"}
    new = {"host/batch.py": "VLLM_BATCH_INVARIANT = False\n"}
    result = scan(old, new, "from host.batch import vllm_is_batch_invariant\n")
    expect(result, ["PP0601 error drift"])
    finding = only(result, "PP0601")
    assert "VLLM_BATCH_INVARIANT" in finding.suggestion


def test_missing_module_suggests_same_leaf_elsewhere():
    old = {"host/a/helpers.py": "def f():\n    pass\n"}
    new = {"host/b/helpers.py": "def f():\n    pass\n"}
    result = scan(old, new, "import host.a.helpers\n")
    expect(result, ["PP0401 error drift"])
    finding = only(result, "PP0401")
    assert "host.b.helpers" in finding.suggestion


@pytest.mark.parametrize(("old", "new", "plugin_src", "expected"), [
    # the negative twin of each kind: the name is where the plugin looks for it on both versions
    ({"host/m.py": "def f():\n    pass\n"}, {"host/m.py": "def f():\n    pass\n"}, "from host.m import f\n",
     ["no PP0401", "no PP0402", "no PP0501", "no PP0601"]),
    # moved: only when NEW defines it elsewhere; renamed: only when a look-alike sits at the old place
    ({"host/m.py": "def f(a):\n    pass\n"}, {"host/m.py": "X = 1\n", "host/n.py": "def f(a):\n    pass\n"},
     "from host.m import f\n", ["PP0402 error drift"]),
    ({"host/m.py": "def f(a):\n    pass\n"}, {"host/m.py": "X = 1\n"}, "from host.m import f\n",
     ["PP0601 error drift"]),
    # a module that only moved inside the package is missing at its old path; present, it is fine
    ({"host/a/m.py": "X = 1\n"}, {"host/b/m.py": "X = 1\n"}, "import host.a.m\n", ["PP0401 error drift"]),
    ({"host/a/m.py": "X = 1\n"}, {"host/a/m.py": "X = 1\n"}, "import host.a.m\n", ["no PP0401"]),
    ({"host/envs.py": "FLAG = 1\n"}, {"host/envs.py": "FLAG = 2\n"},
     "import host.envs as envs\n\nVALUE = envs.FLAG\n", ["no PP0602"]),
])
def test_import_kinds(old, new, plugin_src, expected):
    expect(scan(old, new, plugin_src), expected)


@pytest.mark.parametrize("plugin_src", [
    "from host.api import Thing\n",  # re-export through a package __init__
    "from host import Thing\n",
    "from host.lazy import Thing\n",  # lazy __getattr__ export table
    "from host.star import Thing\n",  # star import
    "import host.api\n",
])
def test_reexports_and_lazy_exports_resolve(plugin_src):
    tree = {"host/impl.py": "class Thing:\n    pass\n",
            "host/__init__.py": "from host.impl import Thing\n",
            "host/api/__init__.py": "from ..impl import Thing\n",
            "host/lazy.py": "_LAZY = {'Thing': 'host.impl:Thing'}\n\ndef __getattr__(name):\n    return _LAZY[name]\n",
            "host/star.py": "from host.impl import *\n"}
    expect(scan(tree, tree, plugin_src), [])


def test_type_checking_only_name_fails_at_run_time():
    old = {"host/m.py": "X = 1\n"}
    new = {"host/m.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from host.other import X\n",
           "host/other.py": "X = 1\n"}
    expect(scan(old, new, "from host.m import X\n"), ["PP0403 error drift"])
    expect(scan(new, new, "from host.other import X\n"), ["no PP0403"])


def test_guarded_import_is_downgraded():
    old = {"host/m.py": "def f():\n    pass\n"}
    new = {"host/m.py": "def g():\n    pass\n"}
    src = "try:\n    from host.m import f\nexcept ImportError:\n    f = None\n"
    expect(scan(old, new, src), ["PP0601 warning drift"])
    src_tc = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from host.m import f\n"
    expect(scan(old, new, src_tc), ["PP0601 info drift"])


def test_function_local_import_is_checked():
    old = {"host/m.py": "def f():\n    pass\n"}
    new = {"host/m.py": "def g():\n    pass\n"}
    src = "def use():\n    from host.m import f\n    return f()\n"
    expect(scan(old, new, src), ["PP0601 error drift use:2"], at=True)


def test_attribute_read_on_host_module():
    old = {"host/envs.py": "VLLM_FLAG = 1\nKEEP = 2\n"}
    new = {"host/envs.py": "KEEP = 2\n"}
    src = "import host.envs as envs\n\ndef f():\n    return envs.VLLM_FLAG + envs.KEEP\n"
    result = scan(old, new, src)
    expect(result, ["PP0602 error drift f:4"], at=True)
    finding = only(result, "PP0602")
    assert finding.subject == "host.envs.VLLM_FLAG" and finding.plugin.line == 4


def test_attribute_the_plugin_sets_itself_is_not_missing():
    tree = {"host/state.py": "_TP = None\n"}
    src = ("import host.state as state\n\ndef patch():\n    state._MY_GROUP = 1\n\n"
           "def use():\n    return state._MY_GROUP\n")
    expect(scan(tree, tree, src), ["no PP0602"])


def test_latent_unresolved_import():
    tree = {"host/m.py": "def g():\n    pass\n"}
    expect(scan(tree, tree, "from host.m import f\n"), ["PP0601 error latent"])


# -- scoring thresholds: one case just below, one just above ---------------------------------------------
# A rename scores 0.4 x name likeness (difflib ratio) + 0.6 x shape likeness (shared parameter names) and
# needs 0.55. Here the shape is half alike ({num_blocks, block_size} vs {num_blocks}): 0.3 + 0.4 x ratio.
@pytest.mark.parametrize(("candidate", "expected"), [
    ("kv_cache_dims", ["PP0501 error drift"]),  # ratio 0.645: score 0.558
    ("kv_shape", ["PP0601 error drift"]),  # ratio 0.615: score 0.546
])
def test_rename_score_threshold(candidate, expected):
    old = {"host/attn.py": "def get_kv_cache_shape(num_blocks, block_size):\n    return num_blocks\n"}
    new = {"host/attn.py": f"def {candidate}(num_blocks):\n    return num_blocks\n"}
    result = scan(old, new, "from host.attn import get_kv_cache_shape\n")
    expect(result, expected)


def test_rename_shape_weight():
    # the same names with the whole shape alike (score 0.4 x 0.615 + 0.6 = 0.846): a rename
    old = {"host/attn.py": "def get_kv_cache_shape(num_blocks, block_size):\n    return num_blocks\n"}
    new = {"host/attn.py": "def kv_shape(num_blocks, block_size):\n    return num_blocks\n"}
    expect(scan(old, new, "from host.attn import get_kv_cache_shape\n"), ["PP0501 error drift"])
    # ... and with nothing of the shape alike, even a near-identical name is not (0.4 x 0.97 < 0.55)
    new = {"host/attn.py": "def get_kv_cache_shapes(layout):\n    return layout\n"}
    expect(scan(old, new, "from host.attn import get_kv_cache_shape\n"), ["PP0601 error drift"])


# Look-alike names at the old place are listed from a difflib ratio of 0.6 on (the ratio of candidate to name).
@pytest.mark.parametrize(("neighbour", "listed"), [
    ("kv_cache", True),  # ratio 0.615
    ("kv_cache_dim", True),  # ratio 0.600: the cut-off itself
    ("get_kv_dims", False),  # ratio 0.552
])
def test_look_alike_cutoff(neighbour, listed):
    old = {"host/attn.py": "def get_kv_cache_shape(num_blocks, block_size):\n    return num_blocks\n"}
    new = {"host/attn.py": f"{neighbour} = None\n"}
    result = scan(old, new, "from host.attn import get_kv_cache_shape\n")
    expect(result, ["PP0601 error drift"])
    assert (f"has: {neighbour}" in only(result, "PP0601").suggestion) is listed


# A flag may replace a removed helper from a score of 0.6: the share of name tokens they have in
# common (Jaccard, weak words like `use`/`is` left out), plus 1 when the old helper read that flag.
@pytest.mark.parametrize(("flag", "listed"), [
    ("FAST_PREFILL_CUDA_PATH_ON", True),  # 4 of 5 tokens: 0.8
    ("FAST_PREFILL_PATH_ON_GPU", True),  # 3 of 5: 0.6, the threshold itself
    ("FAST_PREFILL_CUDA_PATH_ON_GPU_X", False),  # 4 of 7: 0.571
])
def test_replacement_flag_threshold(flag, listed):
    name = "use_fast_prefill_cuda_path" if "CUDA" in flag else "use_fast_prefill_path"
    old = {"host/m.py": f"def {name}():\n    return False\n"}
    new = {"host/m.py": "X = 1\n", "host/envs.py": f"{flag} = False\n"}
    result = scan(old, new, f"from host.m import {name}\n")
    expect(result, ["PP0601 error drift"])
    assert (f"`host.envs.{flag}`" in only(result, "PP0601").suggestion) is listed


@pytest.mark.parametrize(("body", "listed"), [
    ("return HOST_MODE", True),
    ("if HOST_MODE:\n        return 1\n    return 0", True),  # tested: it decides the result too
    ("return False", False),
    ("return make(rows, pin_memory=HOST_MODE)", True),  # returned (inside the call): still decides it
    ("rows = make(pin_memory=HOST_MODE)\n    return rows", False),  # only passed on: no stand-in
])
def test_a_flag_the_old_helper_read_is_listed_without_shared_words(body, listed):
    old = {"host/m.py": f"HOST_MODE = 1\n\n\ndef batch_invariant():\n    {body}\n"}
    new = {"host/m.py": "HOST_MODE = 1\n"}
    result = scan(old, new, "from host.m import batch_invariant\n")
    expect(result, ["PP0601 error drift"])
    assert ("`host.m.HOST_MODE`" in only(result, "PP0601").suggestion) is listed


@pytest.mark.parametrize(("use", "suggests_it"), [
    ("def build(n):\n    return FusedMoE(n)\n", True),  # called: the factory that replaced it is a fit
    ("def pick(layer):\n    return isinstance(layer, FusedMoE)\n", False),  # a factory cannot take an isinstance
])
def test_renamed_to_a_function_is_suggested_only_where_a_function_fits(use, suggests_it):
    old = {"host/moe.py": "def FusedMoE(num_experts, top_k):\n    return None\n"}
    new = {"host/moe.py": "def FusedMoEFactory(num_experts, top_k):\n    return None\n"}
    result = scan(old, new, "from host.moe import FusedMoE\n\n\n" + use)
    expect(result, ["PP0501 error drift"])
    finding = only(result, "PP0501")
    assert finding.args["candidate"] == "FusedMoEFactory"
    assert finding.suggestion.startswith("use `host.moe.FusedMoEFactory`") is suggests_it


def test_a_flag_the_old_helper_read_is_listed_for_a_name_of_weak_words_only():
    """`is_enabled` has no word a flag could share (both are weak): the flag it read still counts."""
    old = {"host/m.py": "HOST_MODE = 1\n\n\ndef is_enabled():\n    return HOST_MODE\n"}
    result = scan(old, {"host/m.py": "HOST_MODE = 1\n"}, "from host.m import is_enabled\n")
    expect(result, ["PP0601 error drift"])
    assert only(result, "PP0601").suggestion == "a flag may replace it: `host.m.HOST_MODE`"


def test_attribute_missing_on_a_class_lists_its_look_alike_members():
    old = {"host/runner.py": "class Runner:\n    max_batch = 8\n\n    def step(self):\n        pass\n"}
    new = {"host/runner.py": "class Runner:\n    max_batches = 8\n\n    def step(self):\n        pass\n"}
    result = scan(old, new, "from host.runner import Runner\n\n\ndef size():\n    return Runner.max_batch\n")
    expect(result, ["PP0602 error drift size:5"], at=True)
    finding = only(result, "PP0602")
    assert finding.subject == "host.runner.Runner.max_batch"
    assert finding.suggestion == "host 2.0 `host.runner.Runner` has: max_batches"


@pytest.mark.parametrize(("modules", "suggestion"), [
    (["host/v1/pooler.py"], "the module may have moved to `host.v1.pooler`"),
    (["host/v1/pooler.py", "host/v2/pooler.py", "host/v3/pooler.py", "host/v4/pooler.py"],
     "the module may have moved to `host.v1.pooler` (or host.v2.pooler, host.v3.pooler)"),  # two more at most
])
def test_missing_module_suggests_modules_of_the_same_name(modules, suggestion):
    old = {"host/pooler.py": "X = 1\n", "host/other.py": "Y = 1\n"}
    new = {"host/other.py": "Y = 1\n", **{m: "X = 1\n" for m in modules}}
    result = scan(old, new, "import host.pooler\n")
    expect(result, ["PP0401 error drift"])
    assert only(result, "PP0401").suggestion == suggestion


def test_every_import_and_read_is_checked_past_skipped_ones():
    """A name the plugin provides itself, and a read seen twice, are skipped: the ones after them still count."""
    old = {"host/m.py": "def f():\n    pass\n\n\ndef g():\n    pass\n\n\nKEEP = 1\nGONE = 2\n"}
    new = {"host/m.py": "KEEP = 1\n"}
    src = ("import host.m as m\nfrom host.m import f\nfrom host.m import g\n\nm.f = f\n\n\n"
           "def use():\n    return m.KEEP + m.KEEP + m.GONE\n")
    result = scan(old, new, src)
    expect(result, ["PP0601 error drift <module>:3", "PP0602 error drift use:9"], at=True)


# A module gone from NEW: for `from module import name` the suggestion follows the name (where NEW
# defines it now); a same-named module elsewhere is offered only when it defines the name too.
@pytest.mark.parametrize(("new", "plugin_src", "suggestion", "new_path"), [
    ({"host/b/helpers.py": "def f():\n    pass\n"}, "from host.a.helpers import f\n",
     "import `f` from `host.b.helpers` (check that it does the same job)", "host/b/helpers.py"),
    ({"host/b/runner.py": "class Runner:\n    pass\n"}, "from host.a.helpers import Runner\n",
     "import `Runner` from `host.b.runner` (check that it does the same job)", "host/b/runner.py"),
    ({"host/b/helpers.py": "def g():\n    pass\n"}, "from host.a.helpers import Meta\n",
     "nearest existing package is `host`; host 2.0 defines `Meta` nowhere: re-derive its use", None),
    ({"host/b/helpers.py": "def g():\n    pass\n"}, "from host.a.helpers import f\n",  # a function too
     "nearest existing package is `host`; host 2.0 defines `f` nowhere: re-derive its use", None),
    ({"host/b/runner.py": "class Runner:\n    pass\n", "host/z/helpers_runner.py": "class Runner:\n    pass\n"},
     "from host.a.helpers import Runner\n",  # the definition closest to the gone module leads
     "import `Runner` from `host.z.helpers_runner` (check that it does the same job); also defined in host.b.runner",
     "host/z/helpers_runner.py"),
    ({"host/b/helpers.py": "def g():\n    pass\n"}, "import host.a.helpers\n",  # twin: a module import
     "the module may have moved to `host.b.helpers`", "host/b/helpers.py"),
])
def test_missing_module_suggestion_follows_the_imported_name(new, plugin_src, suggestion, new_path):
    old = {"host/a/helpers.py": "def f():\n    pass\n\n\nclass Runner:\n    pass\n\n\nclass Meta:\n    pass\n"}
    result = scan(old, {"host/__init__.py": "", **new}, plugin_src)
    expect(result, ["PP0401 error drift"])
    finding = only(result, "PP0401")
    assert finding.suggestion == suggestion
    assert (finding.new.path if finding.new else None) == new_path
    assert finding.old.path == "host/a/helpers.py"


@pytest.mark.parametrize(("handler", "expected"), [
    # a feature probe: the handler carries on without the name (does the old host's way and returns)
    ("    TABLE['fp8'] = 1\n    return", ["PP0601 info drift"]),
    # the handler binds the name again: a stand-in the code goes on to use, where a missing name still fails
    ("    f = None", ["PP0601 warning drift"]),
    # the handler re-raises: nothing falls back
    ("    raise RuntimeError('needs f')", ["PP0601 warning drift"]),
])
def test_a_probe_import_with_a_fallback_is_context(handler, expected):
    old = {"host/m.py": "def f():\n    pass\n"}
    new = {"host/m.py": "def g():\n    pass\n"}
    src = "TABLE = {}\n\n\ndef flip():\n    try:\n        from host.m import f  # noqa: F401\n    except ImportError:\n" \
          + "\n".join("    " + line for line in handler.splitlines()) + "\n"
    result = scan(old, new, src)
    expect(result, expected)
    assert only(result, "PP0601").details[0] == ("guarded: try-fallback" if "info" in expected[0] else "guarded: try")


@pytest.mark.parametrize(("handler", "expected"), [
    # a chain of fallbacks: the handler tries the name's other home, and only then gives up
    ("    try:\n        from host.other import f\n    except ImportError:\n        pass", ["PP0402 info drift"]),
    # the same under an `if`: still an import of the name from elsewhere
    ("    if True:\n        from host.other import f", ["PP0402 info drift"]),
    # nested, but the handler binds a stand-in the code goes on to use: warned as before
    ("    try:\n        import os\n    except ImportError:\n        pass\n    f = None", ["PP0402 warning drift"]),
])
def test_a_fallback_import_nested_in_the_handler_is_a_fallback(handler, expected):
    old = {"host/m.py": "def f():\n    pass\n", "host/other.py": "def f():\n    pass\n"}
    new = {"host/m.py": "def g():\n    pass\n", "host/other.py": "def f():\n    pass\n"}
    src = "f = None\ntry:\n    from host.m import f\nexcept ImportError:\n" + handler + "\n\n\ndef use():\n    return f\n"
    result = scan(old, new, src)
    expect(result, expected)
    finding = only(result, "PP0402")
    assert finding.plugin.line == 3 and finding.status.value == "drift"
    assert finding.details[0] == ("guarded: try-fallback" if "info" in expected[0] else "guarded: try")


@pytest.mark.parametrize("new_m, expected", [
    # NEW has what the try imports: the `except ImportError:` fallback for OLD never runs there
    ("Mode = 0\n", ["PP0601 info drift", "PP0601 info fixed"]),
    # NEW lacks both: the try fails, so the fallback runs and its import fails too
    ("X = 1\n", ["PP0601 info latent", "PP0601 warning drift"]),
])
def test_an_import_in_the_fallback_of_a_try_that_succeeds_does_not_run(new_m, expected):
    old = {"host/m.py": "class Level:\n    NONE = 0\n"}
    new = {"host/m.py": new_m}
    src = ("def mode():\n    try:\n        from host.m import Mode\n        return Mode\n"
           "    except ImportError:\n        from host.m import Level\n        return Level.NONE\n")
    # on OLD the try's import fails (`Mode` is new) and the fallback runs and resolves
    result = scan(old, new, src)
    expect(result, expected)
    level = next(f for f in result.findings if f.subject == "host.m.Level")
    assert ("does not run" in level.details[0]) == (new_m == "Mode = 0\n")


@pytest.mark.parametrize("handler, expected", [
    # a flag the try sets True and the handler False: a probe of an optional module, context
    ("    HAS_EXT = False", ["PP0401 info drift"]),
    # a stand-in bound to something else keeps the name for code that then fails: warned
    ("    HAS_EXT = object()", ["PP0401 warning drift"]),
])
def test_a_probe_that_sets_a_flag_is_context(handler, expected):
    old = {"host/ext.py": "X = 1\n", "host/m.py": "Y = 1\n"}
    new = {"host/m.py": "Y = 1\n"}
    src = "try:\n    import host.ext  # noqa: F401\n    HAS_EXT = True\nexcept ImportError:\n" + handler + "\n"
    expect(scan(old, new, src), expected)


@pytest.mark.parametrize(("call", "expected"), [
    ("Base.register(Mine)", ["no PP0602"]),  # ABCMeta's own: a virtual subclass
    ("Base.zz_register(Mine)", ["PP0602 error latent"]),
])
def test_an_abc_base_gives_its_register(call, expected):
    host = {"host/base.py": "from abc import ABC, abstractmethod\n\n\nclass Base(ABC):\n    @abstractmethod\n"
                            "    def apply(self):\n        pass\n"}
    src = f"from host.base import Base\n\n\nclass Mine:\n    def apply(self):\n        pass\n\n\n{call}\n"
    result = scan(host, host, src)
    expect(result, expected)
