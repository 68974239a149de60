"""A member a host dispatcher hands to a passthrough (`forward(*args, **kwargs)`) runs with the layer's own
call arguments: its override is judged against every host call of a layer that may run it, followed from
each construction (through a factory and the attribute keeping it), not against the bare `self.member`
read (plugin/layer_calls.py). A factory picking the class from a literal value builds only that branch's
class. Each case has its twin where a call that trips the parameter remains (the warning stays)."""

from __future__ import annotations

import pytest

from harness import expect, only, run_scan
from pinport.checks.override_signature import SignaturesCheck

PLATFORMS = """
import enum


class PlatformEnum(enum.Enum):
    CUDA = enum.auto()
    OOT = enum.auto()


class Platform:
    _enum: PlatformEnum

    def is_out_of_tree(self) -> bool:
        return self._enum == PlatformEnum.OOT


current_platform = Platform()
"""

CUSTOM_OP = """
from host.platforms import current_platform


class CustomOp:
    def __init__(self):
        self._forward_method = self.dispatch_forward()

    def forward(self, *args, **kwargs):
        return self._forward_method(*args, **kwargs)

    def forward_native(self, *args, **kwargs):
        raise NotImplementedError

    def forward_cuda(self, *args, **kwargs):
        return self.forward_native(*args, **kwargs)

    def forward_oot(self, *args, **kwargs):
        return self.forward_native(*args, **kwargs)

    def dispatch_forward(self):
        if current_platform.is_out_of_tree():
            return self.forward_oot
        return self.forward_cuda

    @classmethod
    def register_oot(cls, _decorated_op_cls=None, name=None):
        return _decorated_op_cls


class Rope(CustomOp):
    def forward_native(self, positions, query, key=None):
        return query, key


class VisionRope(CustomOp):
    def forward_native(self, query, key):
        return query, key


_CACHE = {}


def get_rope(size, params=None):
    params = params or {}
    kind = params.get("kind", "default")
    key = (size, kind)
    if key in _CACHE:
        return _CACHE[key]
    if kind == "default":
        rope = Rope()
    elif kind == "vision":
        rope = VisionRope()
    else:
        raise ValueError(kind)
    _CACHE[key] = rope
    return rope
"""

MODELS = """
from host.custom_op import get_rope


class Attention:
    def __init__(self, config):
        self.rotary_emb = get_rope(8, params=config.rope_params)

    def forward(self, positions, q, k):
        return self.rotary_emb(positions, q, k)


class VisionAttention:
    def __init__(self):
        params = {{"kind": {kind}}}
        self.rotary_emb = get_rope(8, params=params)

    def forward(self, q, k):
        return self.rotary_emb(q, k)
"""

# the override requires `key`, which the native path makes optional: a call passing two arguments fails
ROPE = ("from host.custom_op import CustomOp, Rope\n\n\nclass MyRope(Rope):\n"
        "    def forward_oot(self, positions, query, key):\n        return query, key\n\n\n"
        "CustomOp.register_oot(_decorated_op_cls=MyRope, name=\"Rope\")\n")
PLATFORM = ("from host.platforms import Platform, PlatformEnum\n\n\nclass MyPlatform(Platform):\n"
            "    _enum = PlatformEnum.OOT\n")
BOOT = "def register():\n    return \"plug.platform.MyPlatform\"\n\n\ndef register_ops():\n    import plug.rope  # noqa: F401\n"
PYPROJECT = ('[project]\nname = "plug"\n\n[project.entry-points."host.general_plugins"]\nops = "plug.boot:register_ops"\n\n'
             '[project.entry-points."host.platform_plugins"]\nplug = "plug.boot:register"\n')
PLUGIN = {"plug/rope.py": ROPE, "plug/platform.py": PLATFORM, "plug/boot.py": BOOT, "pyproject.toml": PYPROJECT}


def scan(models: str, plugin: dict[str, str] = PLUGIN):
    host = {"host/platforms.py": PLATFORMS, "host/custom_op.py": CUSTOM_OP, "host/models.py": models}
    return run_scan(host, host, plugin, checks=(SignaturesCheck(),),
                    plugin_groups=("host.general_plugins", "host.platform_plugins"),
                    platform_instances=("host.platforms.current_platform",), called_implicitly=("forward",))


@pytest.mark.parametrize(("kind", "level"), [
    # the two-argument call holds the factory's result for the literal "vision": a VisionRope, never a Rope
    ('"vision"', "info"),
    # negative twin: the literal selects the default branch, a Rope (the plugin's class) called without `key`
    ('"default"', "warning"),
    # a value the caller does not spell as a literal leaves every branch possible
    ("__import__('os').environ['KIND']", "warning"),
])
def test_a_factory_branch_a_literal_rules_out_builds_nothing_there(kind, level):
    expect(scan(MODELS.format(kind=kind)), [f"PP0107 {level} latent MyRope.forward_oot:5"], at=True)


def test_every_layer_call_passing_the_parameter_fits():
    """Only three-argument calls of a rope: no host call can omit `key`."""
    models = MODELS.format(kind='"vision"').replace("return self.rotary_emb(q, k)", "return q, k")
    expect(scan(models), ["PP0107 info latent MyRope.forward_oot:5"], at=True)


def test_a_layer_handed_to_another_object_is_followed_to_its_calls():
    """The rope goes into a helper's constructor and is called there with two arguments: the warning stays;
    with three it fits."""
    helper = ("\n\nclass Helper:\n    def __init__(self, rope):\n        self.rope = rope\n\n"
              "    def apply(self, positions, q):\n        return self.rope({args})\n\n\n"
              "class Owner:\n    def __init__(self, config):\n        self.helper = Helper(get_rope(4, config.rope_params))\n")
    models = MODELS.format(kind='"vision"')
    expect(scan(models + helper.format(args="positions, q")), ["PP0107 warning latent MyRope.forward_oot:5"], at=True)
    expect(scan(models + helper.format(args="positions, q, q")), ["PP0107 info latent MyRope.forward_oot:5"], at=True)


def test_a_layer_handed_on_where_it_is_not_followed_stays_a_warning():
    """The factory's result goes into a list: its calls are not known, nothing is decided."""
    models = MODELS.format(kind='"vision"') + "\n\nLAYERS = [get_rope(2)]\n"
    expect(scan(models), ["PP0107 warning latent MyRope.forward_oot:5"], at=True)


def test_a_plugin_that_builds_its_class_itself_stays_a_warning():
    """The plugin builds MyRope itself: its instances may reach host code some other way."""
    plugin = {**PLUGIN, "plug/use.py": "from plug.rope import MyRope\n\n\ndef make():\n    return MyRope()\n"}
    expect(scan(MODELS.format(kind='"vision"'), plugin), ["PP0107 warning latent MyRope.forward_oot:5"], at=True)


PATCHED = ("from host.custom_op import Rope\n\n\ndef my_forward_cuda(self, positions, query, key=None):\n"
           "    return query, key\n\n\nRope.forward_cuda = my_forward_cuda\n")


@pytest.mark.parametrize(("call", "level"), [
    # every layer call passes three arguments: none passes `offsets`, which the replacement lacks
    ("self.rotary_emb(positions, q, k)", "info"),
    # negative twin: a layer call passing `offsets=` fails on the replacement
    ("self.rotary_emb(positions, q, k, offsets=positions)", "warning"),
])
def test_a_patched_host_member_the_dispatcher_hands_out_is_judged_by_its_layer_calls(call, level):
    """`Rope.forward_cuda = fn` on a CUDA platform: the dispatcher's route runs it with the layer calls' arguments."""
    host_rope = ("class Rope(CustomOp):\n    def forward_native(self, positions, query, key=None):\n        return query, key\n\n"
                 "    def forward_cuda(self, positions, query, key=None, offsets=None):\n        return query, key\n")
    custom_op = CUSTOM_OP.replace(
        "class Rope(CustomOp):\n    def forward_native(self, positions, query, key=None):\n        return query, key\n",
        host_rope)
    models = MODELS.format(kind='"vision"').replace("return self.rotary_emb(positions, q, k)", f"return {call}")
    host = {"host/platforms.py": PLATFORMS, "host/custom_op.py": custom_op, "host/models.py": models}
    plugin = {"plug/rope.py": PATCHED, "plug/platform.py": PLATFORM.replace("OOT", "CUDA"), "plug/boot.py": BOOT,
              "pyproject.toml": PYPROJECT}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),),
                      plugin_groups=("host.general_plugins", "host.platform_plugins"),
                      platform_instances=("host.platforms.current_platform",), called_implicitly=("forward",))
    expect(result, [f"PP0101 {level} latent <module>:8"], at=True)
    assert any("dispatcher's route" in d for d in only(result, "PP0101").details) is (level == "info")


@pytest.mark.parametrize(("args", "level"), [
    ("positions, q, q", "info"),
    # negative twin: the indexer calls the rope it is handed with two arguments
    ("positions, q", "warning"),
])
def test_a_layer_handed_to_a_held_module_is_followed_into_its_forward(args, level):
    """`attention.indexer(positions, q, attention.rope)` in a module function whose `attention` every caller
    passes as `self` of Attn: the indexer is what Attn stores in `self.indexer` (not what an unrelated class keeps
    in its own `indexer`), its forward gets the rope."""
    models = MODELS.format(kind='"vision"') + (
        f"\n\nclass Indexer:\n    def forward(self, positions, q, rope):\n        return rope({args})\n\n\n"
        "def run(attention, positions, q):\n    return attention.indexer(positions, q, attention.rope)\n\n\n"
        "class Attn:\n    def __init__(self, config):\n        self.indexer = Indexer()\n"
        "        self.rope = get_rope(4, config.rope_params)\n\n"
        "    def forward(self, positions, q):\n        return run(self, positions, q)\n\n\n"
        # another class's `indexer`, set to what we cannot tell: not Attn's
        "class Other:\n    def __init__(self, indexer):\n        self.indexer = indexer\n\n\n"
        "def build(factory):\n    return Other(factory())\n")
    expect(scan(models), [f"PP0107 {level} latent MyRope.forward_oot:5"], at=True)


def test_a_layer_whose_passthrough_is_handed_on_stays_a_warning():
    """`fn = self.rotary_emb.forward`: the passthrough may be called anywhere with anything; its twin, only
    three-argument calls, is info (test_every_layer_call_passing_the_parameter_fits)."""
    models = MODELS.format(kind='"vision"').replace("return self.rotary_emb(q, k)", "return q, k").replace(
        "return self.rotary_emb(positions, q, k)", "fn = self.rotary_emb.forward\n        return fn")
    expect(scan(models), ["PP0107 warning latent MyRope.forward_oot:5"], at=True)
