"""Inline host and plugin sources shared by the mirror (#12), fork (#8) and port tests.

Two scenarios, each in the few variants its tests need:
- mirrors: `host/engine.py` defines `Engine`, and `plug/patch.py`'s `EnginePatch` copies some of its methods;
- forks: an attention backend file on the host, and a plugin file that forks it (tree attention on top).
The tests assert line numbers, so a variant's text must stay exactly as it is; the variants are built
from the same methods so that one copy of each method serves them all.
"""

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
HEADER = "from plug.patching import ArcticPatch\nfrom host.engine import Engine\n\n\n"

# -- mirrors: the host's Engine methods, and the plugin's copies of them ------------------------------

_INIT = """\
    def __init__(self, config):
        self.config = config
        self.steps = 0
"""
_LOG_DETAILS = """\
    def log_details(self, outputs):
        return len(outputs)
"""
_COMPUTE = """\
    def compute(self, item):
        return item * 2
"""
DRAIN = _DRAIN = """\
    def drain(self, queue):
        results = []
        while queue:
            item = queue.pop()
            results.append(self.compute(item))
        self.steps += len(results)
        return results
"""
_STEP = """\
    def step(self, batch):
        outputs = []
        for item in batch:
            value = self.compute(item)
            outputs.append(value)
        self.steps += 1
        return outputs
"""
_SKIP_PADDING = """\
        for item in batch:
            if item is None:  # plugin: skip padding
                continue
"""
MIRRORED_STEP = _MIRRORED_STEP = _STEP.replace("        for item in batch:\n", _SKIP_PADDING)


def _logged(step: str) -> str:
    """A `step` that also calls `log_details` before it returns."""
    return step.replace("        return outputs\n", "        self.log_details(outputs)\n        return outputs\n")


def _engine(*methods: str) -> str:
    return "\nclass Engine:\n" + "\n".join((_INIT, *methods))


def engine_patch(*methods: str) -> str:
    """The plugin's `EnginePatch` class with these methods (its imports not included)."""
    return "class EnginePatch(ArcticPatch[Engine]):\n" + "\n".join(methods)


def _engine_patch(*methods: str) -> str:
    return HEADER + engine_patch(*methods)


# the plain pair: EnginePatch.step copies Engine.step and skips padding
ENGINE = _engine(_COMPUTE, _STEP)
MIRROR = _engine_patch(_MIRRORED_STEP)

# step also calls log_details, so renaming it upstream leaves the mirror calling a member that is gone
LOGGING_ENGINE = _engine(_LOG_DETAILS, _COMPUTE, _logged(_STEP))
LOGGING_MIRROR = _engine_patch(_logged(_MIRRORED_STEP))

# two mirrors to merge: drain copied with a print added, step with padding skipped and a changed value
DRAINING_ENGINE = _engine(_COMPUTE, _DRAIN, _STEP)
DRAINING_MIRRORS = _engine_patch(
    _DRAIN.replace("        return results\n", '        print("drained", len(results))\n        return results\n'),
    _MIRRORED_STEP.replace("value = self.compute(item)", "value = self.compute(item) + 1"))
# NEW hosts for them: step changes away from the plugin's lines, or on them
DRAINING_STEPS = DRAINING_ENGINE.replace("self.steps += 1", "self.steps += len(batch)")
DRAINING_CONFIG = DRAINING_ENGINE.replace("value = self.compute(item)", "value = self.compute(item, self.config)")
# ... or on the very tokens the plugin changed (`+ 1` there, `* 2` here): a real conflict
DRAINING_SCALED = DRAINING_ENGINE.replace("value = self.compute(item)", "value = self.compute(item) * 2")

# -- forks: an attention backend, and the plugin's fork of it -----------------------------------------

BASE = "class ImplBase:\n    def reset(self):\n        return None\n"

_BACKEND_CLASSES = """
import math

from host.base import ImplBase


class BackendOptions:
    def __init__(self, block_size, num_heads):
        self.block_size = block_size
        self.num_heads = num_heads


class AttentionBackend:
    name = "FLASH"

    @staticmethod
    def get_kv_cache_shape(num_blocks, block_size, num_heads, head_size):
        return (2, num_blocks, block_size, num_heads, head_size)

    @staticmethod
    def supports_head_size(head_size):
        return head_size % 8 == 0 and head_size <= 256


class AttentionImpl(ImplBase):
"""
_IMPL_INIT = """\
    def __init__(self, num_heads, head_size, scale):
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = scale
"""
_FORWARD = """\
    def forward(self, query, key, value, kv_cache, metadata):
        if metadata is None:
            return query.fill_(0)
        key_cache, value_cache = kv_cache.unbind(0)
        output = self.attend(query, key_cache, value_cache, metadata)
        return output * self.scale
"""
ATTEND = _ATTEND = """\
    def attend(self, query, key_cache, value_cache, metadata):
        lengths = metadata.seq_lens
        blocks = metadata.block_table
        scores = query @ key_cache[blocks].transpose(-1, -2)
        scores = scores / math.sqrt(self.head_size)
        weights = scores.softmax(dim=-1)
        return weights @ value_cache[blocks][:lengths]
"""
_UPDATE_CACHE = """\
    def update_cache(self, key, value, kv_cache, slot_mapping):
        key_cache, value_cache = kv_cache.unbind(0)
        key_cache.index_copy_(0, slot_mapping, key)
        value_cache.index_copy_(0, slot_mapping, value)
"""
_RESET = """\
    def reset(self):
        self.num_heads = 0
        self.head_size = 0
        self.scale = 1.0
"""
_DESCRIBE = """\
    def describe(self):
        parts = [f"heads={self.num_heads}", f"head_size={self.head_size}"]
        if self.scale != 1.0:
            parts.append(f"scale={self.scale}")
        return ", ".join(parts)
"""
_TREE_BRANCH = """\
        if metadata.tree is not None:
            return self.tree_attend(query, kv_cache, metadata)
"""
_TREE_ATTEND = """
    def tree_attend(self, query, kv_cache, metadata):
        return self.attend(query, kv_cache[0], kv_cache[1], metadata.tree)
"""


def _backend(forward: str, *methods: str) -> str:
    return _BACKEND_CLASSES + _IMPL_INIT + "        self.sliding_window = (-1, -1)\n\n" + "\n".join(
        (forward, _ATTEND, *methods))


def _fork(backend: str) -> str:
    """The plugin's fork of a backend: tree attention before the cache is unbound, a stricter head size."""
    unbind = "        key_cache, value_cache = kv_cache.unbind(0)\n        output = self.attend("
    return backend.replace(unbind, _TREE_BRANCH + unbind).replace("head_size <= 256", "head_size <= 128") \
        + _TREE_ATTEND


# host/backend.py, whose AttentionImpl also writes the cache (a second copy of the unbind line)
BACKEND = _backend(_FORWARD, _UPDATE_CACHE)
FORK = _fork(BACKEND)

# host/backend.py, whose forward calls the inherited ImplBase.reset
RESETTING_BACKEND = _backend(_FORWARD.replace("            return query.fill_(0)\n",
                                              "            return query.fill_(0)\n        self.reset()\n"))
RESETTING_FORK = _fork(RESETTING_BACKEND)

# a second plugin file that copies one line of the backend's forward
SECOND_SITE = """
from host.backend import AttentionBackend


def write_kv(layer, key, value, slots):
    kv_cache = layer.kv_cache
    k_cache, v_cache = kv_cache.unbind(0)
    k_cache.index_copy_(0, slots, key)
    return AttentionBackend.get_kv_cache_shape(1, 16, 8, 64)
"""

# host/attn.py: one standalone AttentionImpl, and a fork that branches to tree attention first
ATTN = "\nimport math\n\n\nclass AttentionImpl:\n" + _IMPL_INIT + "\n" + "\n".join((
    _FORWARD.replace("query, key, value, kv_cache", "query, kv_cache"), _ATTEND, _UPDATE_CACHE, _RESET,
    _DESCRIBE))
ATTN_FORK = ATTN.replace("    def forward(self, query, kv_cache, metadata):\n",
                         "    def forward(self, query, kv_cache, metadata):\n" + _TREE_BRANCH) + _TREE_ATTEND
