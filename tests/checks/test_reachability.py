"""Which plugin classes host code can meet (plugin/reach.py lineage, plugin/callers.py): an override's
mismatch is a warning only where a host call path can reach it, info otherwise. Each rule has a
reachable case (the warning stays) and an unreachable twin (info)."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.override_signature import SignaturesCheck


def breaks(result, code: str) -> list[tuple]:
    """(level, status, plugin file, line, parameter, host file, line) of each finding of `code`: the whole
    finding a signature rule reports, so a case asserts more than its code."""
    return [(f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args["param"], f.new.path, f.new.line)
            for f in result.findings if f.code == code]


PASS_HOST = {"host/passes.py": "class InductorPass:\n    def __init__(self, config):\n        self.config = config\n"}
PASS = "from host.passes import InductorPass\n\n\nclass MyPass(InductorPass):\n    def __init__(self, vllm_config):\n" \
       "        super().__init__(vllm_config)\n"


@pytest.mark.parametrize(("manager", "level"), [
    # only the plugin builds its pass, after an import in the function's own body: the host never calls it
    ("class Manager:\n    def configure(self, config):\n        from .passes import MyPass\n\n"
     "        self.passes = []\n        self.passes.append(MyPass(config))\n", "info"),
    # (PP0201: a rename in place, info by its own rule either way)
    # the same import, but the class itself is handed on (returned): the host may build it any way
    ("def pass_class():\n    from .passes import MyPass\n\n    return MyPass\n", "warning"),
])
def test_a_class_imported_inside_a_function_is_followed_by_its_lineage(manager, level):
    plugin = {"plug/passes.py": PASS, "plug/manager.py": manager}
    result = run_scan(PASS_HOST, PASS_HOST, plugin, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent MyPass.__init__:5", "PP0201 info latent MyPass.__init__:5"], at=True)


ROPE_HOST = """
class CustomOp:
    @classmethod
    def register_oot(cls, _decorated_op_cls=None, name=None):
        return _decorated_op_cls


class Rope(CustomOp):
    def __init__(self, size, base, init_cache=True):
        self.size = size


def get_rope(size):
    return Rope(size, 10000{extra})
"""
ROPE_PLUGIN = {
    "plug/ops.py": "from host.layers import Rope\n\n\nclass MyRope(Rope):\n    def __init__(self, size, base):\n"
                   "        self.size = size\n",
    "plug/utils.py": "TABLE = {}\n\n\ndef register():\n    from host.layers import CustomOp\n\n"
                     "    from plug.ops import MyRope\n\n    global TABLE\n    TABLE = {\"Rope\": MyRope}\n"
                     "    for name, op_cls in TABLE.items():\n        CustomOp.register_oot(_decorated_op_cls=op_cls, name=name)\n",
}


@pytest.mark.parametrize(("extra", "level"), [
    # the table installs MyRope for the host class named Rope; every host construction binds to it
    ("", "info"),
    # a host construction passes the parameter the stand-in lacks: TypeError where the host builds a Rope
    (", init_cache=False", "warning"),
])
def test_register_oot_over_a_table_installs_each_entry_for_the_host_class_of_its_name(extra, level):
    host = {"host/layers.py": ROPE_HOST.format(extra=extra)}
    result = run_scan(host, host, ROPE_PLUGIN, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent MyRope.__init__:5"], at=True)


DRAFT_HOST = {
    "host/proposer.py": "class Proposer:\n    def propose(self, tokens, step=0):\n        return tokens\n",
    "host/runner.py": "from host.proposer import Proposer\n\n\nclass Runner:\n    def __init__(self):\n"
                      "        self.drafter = Proposer()\n\n    def execute(self, tokens):\n"
                      "        return self.drafter.propose(tokens, step=1)\n",
}
DRAFT_PLUGIN = {
    "plug/spec.py": "from host.proposer import Proposer\n\n\nclass MyProposer(Proposer):\n"
                    "    def propose(self, tokens):\n        return tokens\n\n\n"
                    "def get_proposer(method):\n    if method == \"draft\":\n        return MyProposer()\n    return None\n",
    "plug/runner.py": "from host.runner import Runner\n\nfrom plug.spec import get_proposer\n\n\nclass MyRunner(Runner):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.drafter = self._get_drafter()\n\n"
                      "    def _get_drafter(self):\n        return get_proposer(\"draft\")\n{execute}",
}


@pytest.mark.parametrize(("execute", "level"), [
    # built by a plugin function, returned by the runner's method into `self.drafter`: only MyRunner holds
    # one, and it replaces the host method that calls `self.drafter.propose(tokens, step=1)`
    ("\n    def execute(self, tokens):\n        return self.drafter.propose(tokens)\n", "info"),
    # the runner inherits Runner.execute: the host call reaches the drafter
    ("", "warning"),
    # the proposer also goes somewhere not followed (handed to a function): it may meet any host code
    ("\n    def execute(self, tokens):\n        return self.drafter.propose(tokens)\n\n\n"
     "def share(pool):\n    pool.append(get_proposer(\"draft\"))\n", "warning"),
])
def test_a_construction_returned_into_self_attr_is_held_there(execute, level):
    plugin = {**DRAFT_PLUGIN, "plug/runner.py": DRAFT_PLUGIN["plug/runner.py"].format(execute=execute)}
    result = run_scan(DRAFT_HOST, DRAFT_HOST, plugin, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/spec.py", 5, "step", "host/proposer.py", 2)]



@pytest.mark.parametrize(("extra", "level"), [
    # a plain method read off the class and called on another object (`MyProposer.propose(self, ...)`)
    # builds no instance: the runner's drafter is still the only place one is kept
    ("\n\nclass Echo:\n    def propose(self, tokens):\n        return MyProposer.propose(self, tokens)\n", "info"),
    # a classmethod factory read off the class builds one, which may go anywhere: the host call may meet it
    ("\n    @classmethod\n    def create(cls):\n        return cls()\n\n\ndef spare():\n    return MyProposer.create()\n",
     "warning"),
])
def test_a_plain_method_read_off_a_plugin_class_builds_no_instance(extra, level):
    execute = "\n    def execute(self, tokens):\n        return self.drafter.propose(tokens)\n"
    plugin = {"plug/spec.py": DRAFT_PLUGIN["plug/spec.py"].replace("    return None\n", "    return None\n" + extra)
              if extra.startswith("\n\nclass") else DRAFT_PLUGIN["plug/spec.py"].replace(
                  "        return tokens\n\n\ndef get", "        return tokens\n" + extra.split("\n\n\n")[0] +
                  "\n\n\n" + extra.split("\n\n\n")[1] + "\n\ndef get"),
              "plug/runner.py": DRAFT_PLUGIN["plug/runner.py"].format(execute=execute)}
    result = run_scan(DRAFT_HOST, DRAFT_HOST, plugin, checks=(SignaturesCheck(),))
    found = [f for f in result.findings if f.code == "PP0101"]
    assert [(f.level.value, f.plugin.path, f.plugin.line, f.args["param"]) for f in found] == [
        (level, "plug/spec.py", 5, "step")]


@pytest.mark.parametrize(("user", "level"), [
    # only ever initialised by hand from another class (`MyPass.__init__(self, ...)`): the plugin uses it
    # and builds none, so no host construction meets its constructor
    ("from plug.passes import MyPass\n\n\nclass Other:\n    def __init__(self, c):\n        MyPass.__init__(self, c)\n",
     "info"),
    # nothing refers to it: loaded some way the scan cannot see, so the host may build it
    ("", "warning"),
])
def test_a_class_only_initialised_by_hand_is_not_built_by_the_host(user, level):
    plugin = {"plug/passes.py": PASS, "plug/user.py": user}
    result = run_scan(PASS_HOST, PASS_HOST, plugin, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent MyPass.__init__:5", "PP0201 info latent MyPass.__init__:5"], at=True)


STREAM_HOST = {"host/comm.py": "class Comm:\n    def set_stream(self, cuda_stream):\n        self.stream = cuda_stream\n\n\n"
                             "def run(state):\n    state.comm.set_stream(state.stream)\n",
             "host/torch_utils.py": "import torch\n\n{read}\n"}
STREAM_PLUGIN = {"plug/comm.py": "from host.comm import Comm\n\n\nclass MyComm(Comm):\n"
                               "    def set_stream(self, stream):\n        self.stream = stream\n"}


@pytest.mark.parametrize(("read", "level"), [
    # a member read off another package's module (`torch.cuda.set_stream`) is not the plugin's method: the one
    # host call passes the stream positionally, so the rename in place binds
    ("prev_set_stream = torch.cuda.set_stream", "info"),
    # the same bare read off a receiver of unknown type may be the plugin's instance (a callback handed on)
    ("def hook(comm):\n    return comm.set_stream", "warning"),
])
def test_a_bare_read_off_another_packages_module_reaches_no_instance(read, level):
    host = {**STREAM_HOST, "host/torch_utils.py": STREAM_HOST["host/torch_utils.py"].format(read=read)}
    result = run_scan(host, host, STREAM_PLUGIN, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent MyComm.set_stream:5", f"PP0201 {level} latent MyComm.set_stream:5"],
           at=True)


VALUES_HOST = ROPE_HOST.replace("return Rope(size, 10000{extra})", "return Rope(size, 10000)") + """

def build(size, scaled):
    cls = Scaled if scaled else Rope
    return cls(size, 500{extra})


def is_rope(layer):
    kinds = (Rope, pick(Rope))
    return type(layer) is pick(Rope) or isinstance(layer, kinds)


def pick(cls):
    return cls


class Scaled(Rope):
    def __init__(self, size, base):
        Rope.__init__(self, size, base)


ROPES = list[Rope]()
{table}
"""


@pytest.mark.parametrize(("extra", "table", "level"), [
    # the class bound to a local only called (`cls(...)`, judged: binds), type tests through a host helper,
    # a generic's parameter and a member read off it (`Rope.__init__`, the host's own code): every
    # construction is seen, and binds to the stand-in
    ("", "", "info"),
    # the local alias is called with the parameter the stand-in lacks
    (", init_cache=False", "", "warning"),
    # a table entry: the class is handed on, built where no call names it
    ("", "KINDS = {'rope': Rope}", "warning"),
])
def test_a_stand_in_class_used_as_a_value_is_judged_by_the_constructions_it_reaches(extra, table, level):
    host = {"host/layers.py": VALUES_HOST.format(extra=extra, table=table)}
    result = run_scan(host, host, ROPE_PLUGIN, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent MyRope.__init__:5"], at=True)


ATTN_HOST = """
class Attn:
    def __init__(self, a, b, c=None, d=None):
        self.a = a


class Sub(Attn):
    pass


class Own(Attn):
    def __init__(self, a, b, c=None):
        super().__init__(a, b, {up})


def build(kind):
    attn_cls = Sub if kind else Attn
    return [Attn(1, 2, d=3), Sub(1, 2, c=4), attn_cls(1, 2, c=5){extra}]
"""
ATTN_PLUGIN = {"plug/patch_attn.py": "from host.attn import Attn\n\n\ndef _init(self, a, b, d=None, c=None):\n"
                                     "    self.a = a\n\n\nAttn.__init__ = _init\n"}


@pytest.mark.parametrize(("extra", "up", "level"), [
    # every construction (the class's, its subclass's inheriting __init__, through a local, a subclass's call
    # up) passes the swapped parameters by keyword
    ("", "c=c", "info"),
    # one passes the third positionally: it lands in `d`
    (", Sub(1, 2, 3)", "c=c", "warning"),
    ("", "c", "warning"),  # the subclass's own __init__ calls up with it positionally
    # `*args` may fill any slot
    (", Attn(*kind)", "c=c", "warning"),
])
def test_a_replaced_constructor_with_swapped_parameters_is_judged_by_every_construction(extra, up, level):
    host = {"host/attn.py": ATTN_HOST.format(extra=extra, up=up)}
    result = run_scan(host, host, ATTN_PLUGIN, checks=(SignaturesCheck(),))
    expect(result, [f"PP0103 {level} latent <module>:8"], at=True)


IMPL_HOST = {
    "host/backend.py": "class Backend:\n    @staticmethod\n    def get_impl_cls():\n        raise NotImplementedError\n\n\n"
                       "class Impl:\n    def __init__(self, num_heads, scale, rank):\n        self.num_heads = num_heads\n",
    "host/layer.py": "from typing import cast\n\nfrom host.backend import Impl\n\n\nclass Layer:\n"
                     "    def __init__(self, backend):\n        self.backend = backend\n"
                     "        impl_cls = cast(type[Impl], self.backend.get_impl_cls())\n"
                     "        self.impl = impl_cls({args})\n        self.pcp = backend.get_impl_cls().supports_pcp\n",
    "host/composite.py": "def compose(general):\n    impl_cls = general.get_impl_cls()\n\n"
                         "    class Composite:\n        def __init__(self, *args, **kwargs):\n"
                         "            self.inner = impl_cls(*args, **kwargs)\n\n"
                         "    class ComposedBackend:\n        @staticmethod\n        def get_impl_cls():\n"
                         "            return Composite\n\n    return ComposedBackend\n",
}
IMPL_PLUGIN = {
    "plug/backend.py": "from host.backend import Backend, Impl\n\n\nclass MyImpl(Impl):\n"
                       "    def __init__(self, num_heads, scale, **kwargs):\n        self.rank = kwargs[\"rank\"]\n\n\n"
                       "def pick():\n    return MyImpl\n\n\nclass MyBackend(Backend):\n    @staticmethod\n"
                       "    def get_impl_cls():\n        return pick()\n",
}


@pytest.mark.parametrize(("args", "level"), [
    # the host builds the class a hook returns only as `impl_cls(...)`, here by keyword, and forwards
    # `*args, **kwargs` from a class the same hook hands on: every construction binds to MyImpl
    ("num_heads=8, scale=1.0, rank=4", "info"),
    # a construction through the hook passes three positional arguments: MyImpl takes two
    ("8, 1.0, 4", "warning"),
])
def test_a_class_a_hook_returns_is_judged_against_the_hooks_constructions(args, level):
    host = {**IMPL_HOST, "host/layer.py": IMPL_HOST["host/layer.py"].format(args=args)}
    result = run_scan(host, host, IMPL_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/backend.py", 5, "rank", "host/backend.py", 8)]


COMM_HOST = {
    "host/platform.py": "class Platform:\n    @classmethod\n    def get_comm_cls(cls) -> str:\n"
                        "        return \"host.comm.Comm\"\n",
    "host/comm.py": "class Comm:\n    def __init__(self, group, ranks=None):\n        self.group = group\n",
    "host/state.py": "from host.platform import Platform\nfrom host.util import resolve_obj\n\n\n"
                     "class Group:\n    def __init__(self, platform: Platform):\n"
                     "        comm_cls = resolve_obj(platform.get_comm_cls())\n        self.comm = comm_cls({args})\n",
    "host/util.py": "import importlib\n\n\ndef resolve_obj(qualname):\n    module, _, name = qualname.rpartition(\".\")\n"
                    "    return getattr(importlib.import_module(module), name)\n",
}
COMM_PLUGIN = {
    "plug/comm.py": "from host.comm import Comm\n\n\nclass MyComm(Comm):\n    def __init__(self, group):\n"
                    "        self.group = group\n",
    "plug/platform.py": "from host.platform import Platform\n\n\nclass MyPlatform(Platform):\n    @classmethod\n"
                        "    def get_comm_cls(cls) -> str:\n        return \"plug.comm.MyComm\"\n",
}


@pytest.mark.parametrize(("args", "level"), [
    # the platform names its communicator by a class-path string the host resolves and builds by keyword
    ("group=1", "info"),
    # the host's construction passes `ranks=`, which MyComm lacks
    ("group=1, ranks=[0]", "warning"),
])
def test_a_class_path_string_a_hook_returns_is_judged_against_the_resolved_constructions(args, level):
    host = {**COMM_HOST, "host/state.py": COMM_HOST["host/state.py"].format(args=args)}
    result = run_scan(host, host, COMM_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/comm.py", 5, "ranks", "host/comm.py", 2)]


SWAP_PLUGIN = {**COMM_PLUGIN, "plug/capture.py": "{decorator}def comm_switch():\n    import host.comm\n\n"
               "    from plug.comm import MyComm\n\n    original = host.comm.Comm\n    host.comm.Comm = MyComm\n"
               "    try:\n        yield\n    finally:\n        host.comm.Comm = original\n",
               "plug/runner.py": "from plug.capture import comm_switch\n\n\ndef capture():\n    with comm_switch():\n"
                                 "        pass\n"}
SWAP_HOST = {**COMM_HOST, "host/state.py": COMM_HOST["host/state.py"].format(args="group=1"),
             "host/stateless.py": "from host.comm import Comm\n\n\ndef build():\n    return Comm(1, ranks=[0])\n"}


@pytest.mark.parametrize(("decorator", "level"), [
    # swapped in for the host class only while a context manager's `with` block runs: the host module built
    # `Comm(..., ranks=)` from the name it imported, which the swap does not rebind
    ("from contextlib import contextmanager\n\n\n@contextmanager\n", "info"),
    # the same swap as a plain function (say, run at plugin load): later imports of `Comm` get MyComm
    ("", "warning"),
])
def test_a_class_swapped_inside_a_context_manager_meets_only_reads_off_the_module(decorator, level):
    plugin = {**SWAP_PLUGIN, "plug/capture.py": SWAP_PLUGIN["plug/capture.py"].format(decorator=decorator)}
    result = run_scan(SWAP_HOST, SWAP_HOST, plugin, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/comm.py", 5, "ranks", "host/comm.py", 2)]


RPC_HOST = {
    "host/worker.py": "class WorkerBase:\n    def load_model(self, dummy=False):\n        pass\n",
    "host/executor.py": "class Executor:\n    def collective_rpc(self, method, timeout=None, args=(), kwargs=None):\n"
                        "        return [getattr(w, method)(*args, **(kwargs or dict())) for w in self.workers]\n\n"
                        "    def start(self):\n        self.collective_rpc(\"load_model\"{extra})\n"
                        "        self.collective_rpc(\"elastic_execute\", args=(\"load_model\",), timeout=3)\n",
}
RPC_PLUGIN = {"plug/worker.py": "from host.worker import WorkerBase\n\n\nclass MyWorker(WorkerBase):\n"
                                "    def load_model(self):\n        pass\n\n\nWORKER_CLS = \"plug.worker.MyWorker\"\n"}


@pytest.mark.parametrize(("extra", "level"), [
    # the executors name the method as a string with no arguments, directly or through another dispatch
    ("", "info"),
    # the string-named call hands on `dummy=True`, which the override lacks
    (", kwargs={\"dummy\": True}", "warning"),
])
def test_a_method_named_as_a_string_by_a_dispatching_call_gets_that_calls_arguments(extra, level):
    host = {**RPC_HOST, "host/executor.py": RPC_HOST["host/executor.py"].format(extra=extra)}
    result = run_scan(host, host, RPC_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/worker.py", 5, "dummy", "host/worker.py", 2)]


WORKER_HOST = {
    "host/worker_base.py": "class WorkerBase:\n    def compile(self):\n        raise NotImplementedError\n",
    "host/runner.py": "class Runner:\n    def dummy_run(self, n, randomize=False):\n        return n\n",
    "host/gpu_worker.py": "import torch\n\nfrom host.elastic import Elastic\nfrom host.runner import Runner\n"
                          "from host.warmup import (\n    kernel_warmup,\n)\nfrom host.worker_base import WorkerBase\n\n\n"
                          "class GPUWorker(WorkerBase):\n    def __init__(self):\n        self.model_runner = Runner()\n"
                          "        self.elastic = Elastic(self)\n\n    @torch.inference_mode()\n    def compile(self):\n"
                          "        kernel_warmup(self)\n",
    "host/elastic.py": "class Elastic:\n    def __init__(self, worker):\n        self.worker = worker\n\n"
                       "    def load(self):\n        self.worker.model_runner.dummy_run(1, randomize=True)\n{extra}",
    "host/warmup.py": "def kernel_warmup(worker):\n    worker.model_runner.dummy_run(2, randomize=True)\n",
    "host/platform.py": "class CudaPlatform:\n    def check_and_update_config(self, config):\n"
                        "        config.worker_cls = \"host.gpu_worker.GPUWorker\"\n",
}
WORKER_PLUGIN = {
    "plug/runner.py": "from host.runner import Runner\n\n\nclass MyRunner(Runner):\n    def dummy_run(self, n):\n"
                      "        return n\n",
    "plug/worker.py": "from host.worker_base import WorkerBase\n\nfrom plug.runner import MyRunner\n{warmup}\n\n"
                      "class MyWorker(WorkerBase):\n    def __init__(self):\n        self.model_runner = MyRunner()\n\n"
                      "    def compile(self):\n        kernel_warmup(self)\n",
    "plug/platform.py": "class MyPlatform:\n    def check_and_update_config(self, config):\n"
                        "        config.{slot} = \"plug.worker.MyWorker\"\n",
}
OWN_WARMUP = "\n\ndef kernel_warmup(worker):\n    worker.model_runner.dummy_run(3)\n"


@pytest.mark.parametrize(("slot", "extra", "warmup", "level"), [
    # the plugin's platform fills the worker slot: the host's GPUWorker, named only by that slot's string, is
    # never built, nor is the Elastic executor only its __init__ builds; the warm-up only its (grad-mode
    # decorated) compile calls is not the plugin's function of the same name
    ("worker_cls", "", OWN_WARMUP, "info"),
    # the plugin names its worker in another slot: the host may build its GPUWorker, whose warm-up reaches the runner
    ("scheduler_cls", "", OWN_WARMUP, "warning"),
    # the host also builds the executor in a loose function, which any caller may run
    ("worker_cls", "\n\ndef make(worker):\n    return Elastic(worker)\n", OWN_WARMUP, "warning"),
    # the plugin calls the host's warm-up itself (imported from the host module)
    ("worker_cls", "", "from host.warmup import kernel_warmup\n", "warning"),
])
def test_host_callers_in_a_worker_the_plugin_replaces_by_its_slot_never_run(slot, extra, warmup, level):
    host = {**WORKER_HOST, "host/elastic.py": WORKER_HOST["host/elastic.py"].format(extra=extra)}
    plugin = {**WORKER_PLUGIN, "plug/worker.py": WORKER_PLUGIN["plug/worker.py"].format(warmup=warmup),
              "plug/platform.py": WORKER_PLUGIN["plug/platform.py"].format(slot=slot)}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/runner.py", 5, "randomize", "host/runner.py", 2)]


OP_HOST = {
    "host/comm.py": "class Comm:\n    def gather(self, x, dim=0):\n        return x\n",
    "host/ops.py": "def gather(x):\n    return x\n\n\ndef other(x):\n    return x\n\n\n"
                   "def register_op(op_name, op_func):\n    pass\n\n\nregister_op(op_name=\"gather\", op_func={func})\n",
}
OP_PLUGIN = {"plug/comm.py": "from host.comm import Comm\n\n\nclass MyComm(Comm):\n"
                             "    def gather(self, x, dim):\n        return x\n\n\nCOMM_CLS = \"plug.comm.MyComm\"\n"}


@pytest.mark.parametrize(("func", "level"), [
    # the string labels the function the same call is handed: it names no member
    ("gather", "info"),
    # the string labels another function: a member of that name may be looked up by it
    ("other", "warning"),
])
def test_a_string_labelling_the_function_its_call_is_handed_names_no_member(func, level):
    host = {**OP_HOST, "host/ops.py": OP_HOST["host/ops.py"].format(func=func)}
    result = run_scan(host, host, OP_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0107") == [(level, "latent", "plug/comm.py", 5, "dim", "host/comm.py", 2)]


RECEIVER_HOST = {
    "host/comm.py": "class Comm:\n    def gather(self, x, dim=0):\n        return x\n",
    "host/other.py": "class Local:\n    def gather(self, x):\n        return x\n\n\n"
                     "class Remote:\n    def gather(self, x):\n        return x\n\n\ndef build(kind):\n    return kind\n\n\n"
                     "def pick(kind):\n    if kind:\n        return Local()\n    return None\n",
    "host/util.py": "def gather(x):\n    return x\n",
}
FACTORY = ("from host.other import Local, Remote, build, pick\n\n\nclass Runner:\n{declared}    def __init__(self, kind):\n"
           "        self.drafter = self.make(kind)\n\n    def make(self, kind):\n        if kind:\n"
           "            return Local()\n        return {other}\n\n    def step(self, x):\n"
           "        return self.drafter.gather(x)\n")


@pytest.mark.parametrize(("user", "level"), [
    # a parameter annotated with another package's class: a tensor, not the plugin's communicator
    ("import torch\n\n\ndef pick(weight: torch.Tensor, index):\n    return weight.gather(index)\n", "info"),
    ("def pick(weight, index):\n    return weight.gather(index)\n", "warning"),  # unannotated: of unknown type
    # and what that package's values give (a method's result, arithmetic, an item), rebinding the name
    ("import torch\n\n\ndef pick(weight: torch.Tensor, index):\n    weight = weight.float()\n"
     "    scores = (torch.softmax(weight, -1) + weight)[0]\n    return scores.gather(index)\n", "info"),
    # a def nested in the function takes the name as a parameter annotated alike (a default binding it)
    ("import torch\n\n\ndef bind(weight: torch.Tensor):\n    def hook(i, weight: torch.Tensor = weight):\n"
     "        return weight.gather(i)\n\n    return hook\n", "info"),
    ("import torch\n\n\ndef bind(weight: torch.Tensor):\n    def hook(i, weight=weight):\n"
     "        return weight.gather(i)\n\n    return hook\n", "warning"),  # unannotated there: of unknown type
    # the standard library's values stay open (a container, `Any`): they may hold anything
    ("from typing import Any\n\n\ndef pick(weight: Any, index):\n    return weight.gather(index)\n", "warning"),
    # an attribute set from such a parameter (in a static factory too), or from that package's construction
    ("import zmq\n\n\nclass Pipe:\n    def __init__(self, sock: zmq.Socket):\n        self.sock = sock\n"
     "        context = zmq.Context()\n        self.other = context.socket(1)\n\n    @staticmethod\n"
     "    def load(sock: zmq.Socket):\n        self = Pipe.__new__(Pipe)\n        self.sock = sock\n        return self\n\n"
     "    def pull(self, x):\n        return self.sock.gather(x) + self.other.gather(x)\n", "info"),
    ("class Pipe:\n    def __init__(self, sock):\n        self.sock = sock\n\n    def pull(self, x):\n"
     "        return self.sock.gather(x)\n", "warning"),
    # a property by what it returns (here a weak reference's target: unknown), and host code storing the
    # attribute off another object: it may hold anything
    ("class Pipe:\n    def __init__(self, sock):\n        self._ref = sock\n\n    @property\n    def sock(self):\n"
     "        return self._ref()\n\n    def pull(self, x):\n        return self.sock.gather(x)\n", "warning"),
    ("import zmq\n\n\nclass Pipe:\n    def __init__(self, sock: zmq.Socket):\n        self.sock = sock\n\n"
     "    def pull(self, x):\n        return self.sock.gather(x)\n\n\ndef swap(pipe, other):\n    pipe.sock = other\n",
     "warning"),
    # a factory method of the class whose returns are host constructions the plugin's instance is not
    (FACTORY.format(declared="", other="Remote()"), "info"),
    (FACTORY.format(declared="", other="pick(kind)"), "info"),  # an unannotated host function's constructions
    (FACTORY.format(declared="", other="build(kind)"), "warning"),  # it returns its argument: unknown
    # the class body declares the attribute's type (a union): it decides, whatever the assignments
    (FACTORY.format(declared="    drafter: Local | Remote | None\n\n", other="build(kind)"), "info"),
    (FACTORY.format(declared="    drafter: \"Local | Comm | None\"\n\n", other="Remote()").replace(
        "build, pick", "build, pick\nfrom host.comm import Comm"), "warning"),  # the plugin's base among them
    # a local copy of an attribute annotated with a class a method imports itself
    ("class Holder:\n    def __init__(self):\n        from host.other import Local\n\n"
     "        self.comm: Local | None = None\n\n    def run(self, x):\n        comm = self.comm\n"
     "        return comm.gather(x)\n", "info"),
    ("class Holder:\n    def __init__(self, comm):\n        self.comm = comm\n\n    def run(self, x):\n"
     "        comm = self.comm\n        return comm.gather(x)\n", "warning"),
])
def test_a_receiver_the_host_declares_a_class_the_plugin_is_not_reaches_no_override(user, level):
    host = {**RECEIVER_HOST, "host/user.py": user}
    result = run_scan(host, host, OP_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0107") == [(level, "latent", "plug/comm.py", 5, "dim", "host/comm.py", 2)]


@pytest.mark.parametrize(("user", "level"), [
    # a bare read off a host module (by its dotted path, or a name imported from a host module that binds a
    # module, or a placeholder instance, under a condition): the module's member, never an instance's
    ("import host.util\n\nprev = host.util.gather\n", "info"),
    ("from host.flags import lang\n\nprev = lang.gather\n", "info"),
    # the same bare read off a receiver of unknown type may be the plugin's instance (a callback handed on)
    ("def hook(comm):\n    return comm.gather\n", "warning"),
])
def test_a_read_off_a_host_module_reaches_no_instance(user, level):
    host = {**RECEIVER_HOST, "host/user.py": user,
            "host/flags.py": "from host.other import Local\n\nHAS = True\nif HAS:\n    import triton.language as lang\n"
                             "else:\n    lang = Local()\n"}
    result = run_scan(host, host, OP_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0107") == [(level, "latent", "plug/comm.py", 5, "dim", "host/comm.py", 2)]


PIPE = ("import zmq\n\n\nclass Pipe:\n{declared}    def __init__(self, sock: zmq.Socket):\n        self.sock = sock\n\n"
        "    def pull(self, x):\n        return self.sock.gather(x)\n")


@pytest.mark.parametrize(("declared", "store", "level"), [
    # the plugin stores in `self.sock` of its own class, which is no Pipe: a Pipe still holds its socket
    ("", "class Mine:\n    def __init__(self, sock):\n        self.sock = sock\n", "info"),
    # a plugin subclass of Pipe stores there: the host method of Pipe reads what it stored
    ("", "from host.user import Pipe\n\n\nclass MyPipe(Pipe):\n    def __init__(self, sock):\n        self.sock = sock\n",
     "warning"),
    ("", "def fill(pipe, sock):\n    pipe.sock = sock\n", "warning"),  # off another object: it may land on any Pipe
    # the class body declares what the attribute holds: every store, the plugin's too, is written against it
    ("    sock: zmq.Socket\n\n", "def fill(pipe, sock):\n    pipe.sock = sock\n", "info"),
])
def test_a_plugin_store_opens_a_host_attribute_only_where_it_can_land(declared, store, level):
    host = {**RECEIVER_HOST, "host/user.py": PIPE.format(declared=declared)}
    result = run_scan(host, host, {**OP_PLUGIN, "plug/store.py": store}, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0107") == [(level, "latent", "plug/comm.py", 5, "dim", "host/comm.py", 2)]


NARROW = ("from host.other import Local, Remote, build\n\n\nclass Runner:\n    def __init__(self, kind):\n"
          "{declared}        self.drafter = build(kind)\n\n    def step(self, x):\n{test}        return self.drafter.gather(x)\n")


@pytest.mark.parametrize(("declared", "test", "level"), [
    # a method declares the attribute (`self.x: A | B`, no value): what it admits decides, not the stores
    ("        self.drafter: Local | Remote\n", "", "info"),
    ("", "", "warning"),  # without it: set from what a factory is handed, of unknown type
    # a type test around the call narrows the receiver (an `if`, or an `assert` before it in the block)
    ("", "        if kind and isinstance(self.drafter, (Local, Remote)):\n    ", "info"),
    ("", "        assert isinstance(self.drafter, Local | Remote)\n", "info"),
    ("", "        if not isinstance(self.drafter, Local):\n    ", "warning"),  # the other branch: not narrowed
])
def test_a_declaration_or_a_type_test_narrows_a_receiver(declared, test, level):
    user = NARROW.format(declared=declared, test=test).replace("def step(self, x):", "def step(self, x, kind=0):")
    host = {**RECEIVER_HOST, "host/user.py": user}
    result = run_scan(host, host, OP_PLUGIN, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0107") == [(level, "latent", "plug/comm.py", 5, "dim", "host/comm.py", 2)]
