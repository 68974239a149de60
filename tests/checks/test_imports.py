"""Imports (#4 moved, #5 renamed, #6 removed) and host attribute reads."""

import pytest

from harness import codes, only, run_scan
from pinport.checks.imports import ImportsCheck

CHECK = (ImportsCheck(),)


def scan(old: dict, new: dict, plugin_src: str):
    return run_scan(old, new, {"plug/use.py": plugin_src}, checks=CHECK)


def test_moved_name_points_to_its_new_module():
    old = {"host/utils/torch_utils.py": "def is_quantized(x):\n    return x\n"}
    new = {"host/utils/torch_utils.py": "X = 1\n", "host/kv.py": "def is_quantized(x):\n    return x\n"}
    result = scan(old, new, "from host.utils.torch_utils import is_quantized\n")
    finding = only(result, "PP0402")
    assert finding.args["where"] == "host.kv.is_quantized"
    assert finding.old.path == "host/utils/torch_utils.py" and finding.old.line == 1
    assert finding.new.path == "host/kv.py"
    assert finding.plugin.line == 1 and finding.status.value == "drift"


def test_renamed_name_is_suggested_by_definition_similarity():
    old = {"host/fa.py": "def flash_attn_supports_fp8(device, dtype):\n    return True\n"}
    new = {"host/fa.py": "def flash_attn_supports_quant_query_input(device, dtype):\n    return True\n"}
    finding = only(scan(old, new, "from host.fa import flash_attn_supports_fp8\n"), "PP0501")
    assert finding.args["candidate"] == "flash_attn_supports_quant_query_input"
    assert finding.new.line == 1


def test_removed_helper_shows_what_the_old_place_has():
    old = {"host/batch.py": "def vllm_is_batch_invariant():\n    return False\n"}
    new = {"host/batch.py": "VLLM_BATCH_INVARIANT = False\n"}
    finding = only(scan(old, new, "from host.batch import vllm_is_batch_invariant\n"), "PP0601")
    assert "VLLM_BATCH_INVARIANT" in finding.suggestion


def test_missing_module_suggests_same_leaf_elsewhere():
    old = {"host/a/helpers.py": "def f():\n    pass\n"}
    new = {"host/b/helpers.py": "def f():\n    pass\n"}
    finding = only(scan(old, new, "import host.a.helpers\n"), "PP0401")
    assert "host.b.helpers" in finding.suggestion


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
    assert codes(scan(tree, tree, plugin_src)) == []


def test_type_checking_only_name_fails_at_run_time():
    old = {"host/m.py": "X = 1\n"}
    new = {"host/m.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from host.other import X\n",
           "host/other.py": "X = 1\n"}
    assert codes(scan(old, new, "from host.m import X\n")) == ["PP0403"]


def test_guarded_import_is_downgraded():
    old = {"host/m.py": "def f():\n    pass\n"}
    new = {"host/m.py": "def g():\n    pass\n"}
    src = "try:\n    from host.m import f\nexcept ImportError:\n    f = None\n"
    assert only(scan(old, new, src), "PP0601").level.value == "warning"
    src_tc = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from host.m import f\n"
    assert only(scan(old, new, src_tc), "PP0601").level.value == "info"


def test_function_local_import_is_checked():
    old = {"host/m.py": "def f():\n    pass\n"}
    new = {"host/m.py": "def g():\n    pass\n"}
    src = "def use():\n    from host.m import f\n    return f()\n"
    assert only(scan(old, new, src), "PP0601").plugin.line == 2


def test_attribute_read_on_host_module():
    old = {"host/envs.py": "VLLM_FLAG = 1\nKEEP = 2\n"}
    new = {"host/envs.py": "KEEP = 2\n"}
    src = "import host.envs as envs\n\ndef f():\n    return envs.VLLM_FLAG + envs.KEEP\n"
    finding = only(scan(old, new, src), "PP0602")
    assert finding.subject == "host.envs.VLLM_FLAG" and finding.plugin.line == 4


def test_attribute_the_plugin_sets_itself_is_not_missing():
    tree = {"host/state.py": "_TP = None\n"}
    src = ("import host.state as state\n\ndef patch():\n    state._MY_GROUP = 1\n\n"
           "def use():\n    return state._MY_GROUP\n")
    assert codes(scan(tree, tree, src)) == []


def test_latent_unresolved_import():
    tree = {"host/m.py": "def g():\n    pass\n"}
    assert only(scan(tree, tree, "from host.m import f\n"), "PP0601").status.value == "latent"
