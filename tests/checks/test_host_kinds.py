"""Host kinds (#6): classes that became factories, envs flags and variables, TypedDict keys."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.host_kinds import HostKindsCheck

CHECK = (HostKindsCheck(),)
AS_CLASS = "class FusedMoE:\n    def __init__(self, n):\n        self.n = n\n"
AS_FACTORY = "class MoERunner:\n    pass\n\n\ndef FusedMoE(n) -> MoERunner:\n    return MoERunner()\n"


def kinds(old: dict, new: dict, src: str, path: str = "plug/use.py"):
    return run_scan(old, new, {path: src}, checks=CHECK)


@pytest.mark.parametrize(("new", "use", "expected"), [
    (AS_FACTORY, "isinstance(layer, FusedMoE)", ["PP0610 error drift"]),
    (AS_FACTORY, "isinstance(layer, (int, FusedMoE))", ["PP0610 error drift"]),
    (AS_FACTORY, "issubclass(type(layer), FusedMoE)", ["PP0610 error drift"]),
    (AS_CLASS, "isinstance(layer, FusedMoE)", ["no PP0610"]),
    (AS_FACTORY, "FusedMoE(4)", ["no PP0610"]),  # a call works either way
])
def test_class_became_function(new, use, expected):
    src = f"from host.moe import FusedMoE\n\n\ndef check(layer):\n    return {use}\n"
    result = kinds({"host/moe.py": AS_CLASS}, {"host/moe.py": new}, src)
    expect(result, expected)
    if not expected[0].startswith("no "):
        finding = only(result, "PP0610")
        assert finding.plugin.line == 5 and finding.plugin.unit == "check"
        assert (finding.new.path, finding.new.line) == ("host/moe.py", 5)
        assert (finding.old.path, finding.old.line) == ("host/moe.py", 1)
        assert finding.status.value == "drift"


def test_except_clause_with_a_function():
    old = {"host/errors.py": "class OOMError(Exception):\n    pass\n"}
    new = {"host/errors.py": "def OOMError(msg):\n    return RuntimeError(msg)\n"}
    src = "from host import errors\n\n\ndef f():\n    try:\n        pass\n    except errors.OOMError:\n        pass\n"
    result = kinds(old, new, src)
    expect(result, ["PP0610 error drift"])
    finding = only(result, "PP0610")
    assert finding.plugin.line == 7 and finding.args["how"] == "except clause"


@pytest.mark.parametrize(("new", "expected"), [
    ("class graph_capture:\n    def __init__(self, device):\n        pass\n", ["PP0611 error drift"]),
    ("def graph_capture(device):\n    pass\n", ["no PP0611"]),
])
def test_function_became_class(new, expected):
    old = {"host/parallel_state.py": "def graph_capture(device):\n    pass\n"}
    src = "from host import parallel_state\n\n\ndef my_capture(device):\n    pass\n\n\n" \
          "parallel_state.graph_capture = my_capture\n"
    expect(kinds(old, {"host/parallel_state.py": new}, src), expected)


ENVS = """
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    HOST_FORCE_MARLIN: bool = False
    HOST_USE_V2: bool = False

environment_variables = {{
{entries}
}}


def __getattr__(name):
    if name in environment_variables:
        return environment_variables[name]()
    raise AttributeError(name)
"""
BOTH = ENVS.format(entries='    "HOST_FORCE_MARLIN": lambda: bool(int(os.getenv("HOST_FORCE_MARLIN", "0"))),\n'
                           '    "HOST_USE_V2": lambda: bool(int(os.getenv("HOST_USE_V2", "0"))),')
NO_MARLIN = ENVS.format(entries='    "HOST_USE_V2": lambda: bool(int(os.getenv("HOST_USE_V2", "0"))),')
NO_V2 = ENVS.format(entries='    "HOST_FORCE_MARLIN": lambda: bool(int(os.getenv("HOST_FORCE_MARLIN", "0"))),')
READ_FLAG = "import host.envs as envs\n\n\ndef use():\n    return envs.HOST_FORCE_MARLIN\n"


@pytest.mark.parametrize(("new", "expected"), [(NO_MARLIN, ["PP0612 error drift"]), (BOTH, ["no PP0612"])])
def test_env_flag_removed_from_the_lazy_table(new, expected):
    # the TYPE_CHECKING declaration stays: only the lazy table says what exists at run time
    result = kinds({"host/envs.py": BOTH}, {"host/envs.py": new}, READ_FLAG)
    expect(result, expected)
    if not expected[0].startswith("no "):
        finding = only(result, "PP0612")
        assert finding.args["name"] == "HOST_FORCE_MARLIN" and finding.plugin.line == 5
        assert finding.old.path == "host/envs.py" and finding.old.line == 9
        assert finding.new is None


def test_guarded_flag_read_is_a_warning():
    src = "import host.envs as envs\n\ntry:\n    X = envs.HOST_FORCE_MARLIN\nexcept AttributeError:\n    X = None\n"
    expect(kinds({"host/envs.py": BOTH}, {"host/envs.py": NO_MARLIN}, src), ["PP0612 warning drift"])


def test_is_env_flag_read_hook_for_the_imports_check(tmp_path):
    from harness import inline_tree
    from pinport.model.host import HostView
    from pinport.model.index import load_index
    from pinport.model.resolve import Resolver

    index = load_index(inline_tree(tmp_path, "host", "host 2.0", {"host/envs.py": NO_MARLIN,
                                                                  "host/util.py": "X = 1\n"}))
    view = HostView(index, Resolver(index, "host"), env_module="envs")  # the synthetic host's flag module
    assert view.is_env_flag_read("host.envs", "HOST_FORCE_MARLIN")
    assert not view.is_env_flag_read("host.envs", "lower_case")
    assert not view.is_env_flag_read("host.util", "X")


SETS = "import os\n\n\ndef register():\n    os.environ['HOST_USE_V2'] = '0'\n"


@pytest.mark.parametrize(("new", "src", "expected"), [
    (NO_V2, SETS, ["PP0613 warning drift"]),
    (BOTH, SETS, ["no PP0613"]),
    (NO_V2, SETS.replace("os.environ['HOST_USE_V2'] = '0'", "os.environ.setdefault('HOST_USE_V2', '0')"),
     ["PP0613 warning drift"]),
    (NO_V2, SETS.replace("HOST_USE_V2", "OTHER_TOOL_FLAG"), ["no PP0613"]),  # not the host's variable
])
def test_env_var_no_longer_read(new, src, expected):
    expect(kinds({"host/envs.py": BOTH}, {"host/envs.py": new}, src), expected)


def test_env_var_read_outside_the_table_still_counts():
    new = {"host/envs.py": NO_V2, "host/worker.py": "import os\n\nUSE = os.environ.get('HOST_USE_V2')\n"}
    expect(kinds({"host/envs.py": BOTH}, new, SETS), ["no PP0613"])


BATCH_OLD = "from typing import TypedDict\n\n\nclass Batch(TypedDict):\n    input_ids: list\n    positions: list\n"
BATCH_NEW = "from typing import TypedDict\n\n\nclass Batch(TypedDict):\n    input_ids: list\n"


@pytest.mark.parametrize(("new", "read", "expected"), [
    (BATCH_NEW, 'batch["positions"]', ["PP0614 error drift"]),
    (BATCH_NEW, 'batch.get("positions")', ["PP0614 warning drift"]),  # `.get` survives a missing key
    (BATCH_OLD, 'batch["positions"]', ["no PP0614"]),
    (BATCH_NEW, 'batch["input_ids"]', ["no PP0614"]),
])
def test_typeddict_keys(new, read, expected):
    src = f"from host.batch import Batch\n\n\ndef f(batch: Batch):\n    return {read}\n"
    result = kinds({"host/batch.py": BATCH_OLD}, {"host/batch.py": new}, src)
    expect(result, expected)
    if not expected[0].startswith("no "):
        finding = only(result, "PP0614")
        assert finding.plugin.line == 5 and (finding.old.path, finding.old.line) == ("host/batch.py", 6)


def test_untyped_dict_is_not_judged():
    src = "def f(batch):\n    return batch['positions']\n"
    expect(kinds({"host/batch.py": BATCH_OLD}, {"host/batch.py": BATCH_NEW}, src), ["no PP0614"])


def test_an_envs_getattr_without_a_recognised_table_may_answer_any_flag():
    dynamic = "import os\n\n\ndef __getattr__(name):\n    return os.environ.get(name)\n"
    expect(kinds({"host/envs.py": BOTH}, {"host/envs.py": dynamic}, READ_FLAG), ["no PP0612"])
    expect(kinds({"host/envs.py": BOTH}, {"host/envs.py": NO_MARLIN}, READ_FLAG), ["PP0612 error drift"])


def test_a_flag_read_in_a_try_whose_handler_falls_back_is_context():
    """`try: if not envs.FLAG: ...` with an `except Exception:` doing what a false flag would: written for
    hosts without the flag. Its twin above (`except AttributeError: X = None`) keeps a stand-in: a warning."""
    src = ("import host.envs as envs\n\n\nclass Updater:\n    def init(self):\n        try:\n"
           "            if not envs.HOST_FORCE_MARLIN:\n                self.periodic = False\n"
           "        except Exception:\n            self.periodic = False\n")
    expect(kinds({"host/envs.py": BOTH}, {"host/envs.py": NO_MARLIN}, src), ["PP0612 info drift"])
