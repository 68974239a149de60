"""Host registries that never build what the plugin hands them (plugin/construction.py): a constructor
mismatch is a warning only where a host construction can reach it, info where only plugin code builds
the class. Each rule has a reachable twin (the warning stays)."""

from __future__ import annotations

import pytest

from harness import run_scan
from pinport.checks.override_signature import SignaturesCheck

OP_HOST = """
op_registry = {{}}


class CustomOp:
    def __init__(self, *, enforce_enable=False):
        self.enforce_enable = enforce_enable

    @classmethod
    def register(cls, name):
        def decorator(op_cls):
            assert name not in op_registry
            op_cls.name = name
            {store}
            return op_cls

        return decorator
"""
CONFIG_HOST = "from host.custom_op import op_registry\n\n\ndef check(names):\n    return [n for n in names if n {read}]\n"
OP_PLUGIN = {
    "plug/mixer.py": "from host.custom_op import CustomOp\n\n\n@CustomOp.register(\"my_mixer\")\nclass Mixer(CustomOp):\n"
                     "    def __init__(self, size):\n        super().__init__()\n        self.size = size\n",
    "plug/layers.py": "from plug.mixer import Mixer\n\n\nclass Layer:\n    def __init__(self, size):\n"
                      "        self.mixer = Mixer(size)\n",
}


def _mixer(result) -> list[tuple]:
    return [(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args.get("param"))
            for f in result.findings if f.plugin and f.plugin.path == "plug/mixer.py"]


@pytest.mark.parametrize(("store", "read", "level"), [
    # the decorator files the class by name and the host only tests names against the table: it builds none,
    # so only the plugin's Layer builds a Mixer (with its own arguments)
    ("op_registry[name] = op_cls", "not in op_registry", "info"),
    # the same filing, but the host takes a class out of the table and builds it: a host construction
    # that passes `enforce_enable` reaches the plugin's constructor
    ("op_registry[name] = op_cls", "in op_registry and op_registry[n](enforce_enable=True)", "warning"),
    # the decorator hands the class to a host function of its own: what that does with it is not followed
    ("op_registry[name] = op_cls\n            _instances.append(op_cls())", "not in op_registry", "warning"),
    # the decorator builds the class itself
    ("op_registry[name] = op_cls(enforce_enable=True)", "not in op_registry", "warning"),
])
def test_a_decorator_that_only_files_the_class_builds_none(store, read, level):
    host = {"host/custom_op.py": OP_HOST.format(store=store) + "\n\n_instances = []\n",
            "host/config.py": CONFIG_HOST.format(read=read)}
    result = run_scan(host, host, OP_PLUGIN, checks=(SignaturesCheck(),))
    assert _mixer(result) == [("PP0101", level, "latent", "plug/mixer.py", 6, "enforce_enable"),
                              ("PP0201", level, "latent", "plug/mixer.py", 6, "size")]


OUT_HOST = {"host/outputs.py": "class Output:\n    def __init__(self, size, stream=None):\n        self.size = size\n\n\n"
                               "def make(size):\n    return Output(size, stream=1)\n"}
OUT_PLUGIN = "from host.outputs import Output\n\n\nclass MyOutput(Output):\n    def __init__(self, size):\n" \
             "        super().__init__(size)\n\n\ndef build(fancy, name, pool):\n{body}"


@pytest.mark.parametrize(("body", "level"), [
    # a local alias, one branch of a conditional, only called there: the plugin builds it
    ("    cls = MyOutput if fancy else Output\n    return cls(3)\n", "info"),
    # a local name -> class table, what it gives called at once or through one more local name
    ("    table = {\"mine\": MyOutput, \"theirs\": Output}\n    cls = table[name]\n    return cls(3)\n", "info"),
    ("    table = {\"mine\": MyOutput}\n    return table.get(name, Output)(3)\n", "info"),
    # the alias is handed on as well: whoever gets it may build it with the host's arguments
    ("    cls = MyOutput if fancy else Output\n    pool.append(cls)\n    return cls(3)\n", "warning"),
    # the table's classes are iterated and handed out
    ("    table = {\"mine\": MyOutput}\n    pool.extend(table.values())\n    return table[name](3)\n", "warning"),
    # the alias is bound again: the name no longer stands for the classes of one statement
    ("    cls = MyOutput if fancy else Output\n    cls = pool[0]\n    return cls(3)\n", "warning"),
    # the class is the condition's test, not a value bound
    ("    cls = Output if MyOutput else Output\n    return cls(3)\n", "warning"),
])
def test_a_class_bound_to_a_local_name_only_called_is_built_by_the_plugin(body, level):
    result = run_scan(OUT_HOST, OUT_HOST, {"plug/outputs.py": OUT_PLUGIN.format(body=body)}, checks=(SignaturesCheck(),))
    found = [(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args.get("param"))
             for f in result.findings if f.code == "PP0101"]
    assert found == [("PP0101", level, "latent", "plug/outputs.py", 5, "stream")]


COMPILE_HOST = """
import logging

logger = logging.getLogger(__name__)
_SEEN = []


class Model:
    def __init__(self, *, config, prefix="", layer_type=None):
        self.config = config


def support_compile(cls=None, *, dims=None):
    def helper(cls):
        if not hasattr(cls, "forward"):
            raise TypeError(f"{{cls}} has no forward")
        logger.debug("compiling %s", cls)
        return _wrap(cls, dims)

    if cls is not None:
        assert isinstance(cls, type)
        return helper(cls)
    return helper


def _wrap(cls, dims):
    old_init = cls.__init__

    def __init__(self, *, config, **kwargs):
        old_init(self, config=config, **kwargs)

    cls.__init__ = __init__
    setattr(cls, "_dims", dims)
    {extra}
    return cls
"""
COMPILE_PLUGIN = "from host.model import Model, support_compile\n\n\n{decorator}\nclass MyModel(Model):\n" \
                 "    def __init__(self, *, config, prefix=\"\"):\n        super().__init__(config=config, prefix=prefix)\n" \
                 "\n    def forward(self, x):\n        return x\n\n\nclass ForLM:\n    def __init__(self, config):\n" \
                 "        self.model = MyModel(config=config)\n"


@pytest.mark.parametrize(("decorator", "extra", "level"), [
    # the decorator (bare, or called for its options) hands the class to a host helper that wraps its
    # `__init__`, sets attributes and returns it; it tests, formats and logs it: it builds none
    ("@support_compile", "", "info"),
    ("@support_compile(dims={\"x\": 0})", "", "info"),
    # the helper also keeps the class in a module list: what reads it is not followed
    ("@support_compile", "_SEEN.append(cls)", "warning"),
    # the helper builds the class
    ("@support_compile(dims={\"x\": 0})", "_SEEN.append(cls(config=None, layer_type=1))", "warning"),
    # the helper stores the class as another object's attribute value
    ("@support_compile", "setattr(_SEEN, \"last\", cls)", "warning"),
])
def test_a_decorator_handing_the_class_to_a_host_helper_that_only_wraps_it_builds_none(decorator, extra, level):
    host = {"host/model.py": COMPILE_HOST.format(extra=extra)}
    plugin = {"plug/model.py": COMPILE_PLUGIN.format(decorator=decorator)}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    found = [(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args.get("param"))
             for f in result.findings if f.code == "PP0101"]
    assert found == [("PP0101", level, "latent", "plug/model.py", 6, "layer_type")]


ITEMS_HOST = {"host/items.py": "class Items:\n    def __init__(self, data, modality=\"image\"):\n        self.data = data\n\n\n"
                             "class DataItems(dict):\n    def get_items(self, modality, typ):\n        items = self[modality]\n"
                             "        if not isinstance(items, typ):\n            raise TypeError(f\"expected {{typ}}\")\n"
                             "{extra}        return items\n"}
ITEMS_PLUGIN = "from host.items import Items\n\n\nclass MyItems(Items):\n    def __init__(self, data):\n" \
               "        super().__init__(data)\n\n\ndef parse(data):\n    return MyItems(data)\n\n\n" \
               "def prompt(mm_items):\n    return mm_items.get_items(\"image\", {typ})\n"


@pytest.mark.parametrize(("typ", "extra", "level"), [
    # handed, alone or in a tuple, to a host method that only tests against it: it builds none there
    ("(MyItems, Items)", "", "info"),
    ("MyItems", "", "info"),
    ("typ=(MyItems, Items)", "", "info"),
    # the host method builds what it is handed
    ("(MyItems, Items)", "        typ[0](items, modality=\"audio\")\n", "warning"),
    # handed inside a list, no type tuple: a container the host may keep and take classes out of
    ("[MyItems]", "", "warning"),
])
def test_a_class_handed_to_a_host_function_that_only_tests_against_it_is_not_built_there(typ, extra, level):
    host = {"host/items.py": ITEMS_HOST["host/items.py"].format(extra=extra)}
    result = run_scan(host, host, {"plug/items.py": ITEMS_PLUGIN.format(typ=typ)}, checks=(SignaturesCheck(),))
    found = [(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args.get("param"))
             for f in result.findings if f.code == "PP0101"]
    assert found == [("PP0101", level, "latent", "plug/items.py", 5, "modality")]


LAYER_HOST = {"host/layers.py": "class Layer:\n    def __init__(self, config, layer_idx, cache=None):\n        self.config = config\n\n\n"
                              "def make_layers(n, layer_type):\n    return [layer_type(None, i, cache=1) for i in range(n)]\n\n\n"
                              "class HostLM:\n    def __init__(self, *, config, layer_type=Layer):\n"
                              "        self.layers = make_layers(2, layer_type)\n"}
LAYER_PLUGIN = "from host.layers import HostLM, Layer, make_layers\n\n\nclass MyLayer(Layer):\n" \
               "    def __init__(self, config, layer_idx):\n        super().__init__(config, layer_idx)\n\n\n" \
               "class BaseLM:\n    def __init__(self, *, config, layer_type=None):\n" \
               "        layer_type = layer_type or Layer\n\n        def make(i):\n            return layer_type(config, i)\n\n" \
               "        self.layers = {layers}\n\n\nclass MyLM({base}):\n    def __init__(self, *, config):\n" \
               "        super().__init__(config=config, layer_type=MyLayer)\n\n\nclass ForLM:\n" \
               "    def __init__(self, config):\n        self.model = MyLM(config=config)\n"


@pytest.mark.parametrize(("layers", "base", "level"), [
    # the plugin base's constructor only calls what it is handed (in a closure, after taking a default)
    ("[make(i) for i in range(2)]", "BaseLM", "info"),
    # the plugin base hands it on to a host function, which builds it with the host's arguments
    ("make_layers(2, layer_type)", "BaseLM", "warning"),
    # the base is the host's: its constructor builds it
    ("[make(i) for i in range(2)]", "HostLM", "warning"),
])
def test_a_class_handed_to_a_plugin_base_constructor_that_only_builds_it(layers, base, level):
    plugin = {"plug/model.py": LAYER_PLUGIN.format(layers=layers, base=base)}
    result = run_scan(LAYER_HOST, LAYER_HOST, plugin, checks=(SignaturesCheck(),))
    found = [(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args.get("param"))
             for f in result.findings if f.code == "PP0101" and f.plugin.line == 5]
    assert found == [("PP0101", level, "latent", "plug/model.py", 5, "cache")]
