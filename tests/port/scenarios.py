"""Inline sources shared by the port tests: a host engine with mirrored methods, a forked file."""

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-c",
                           "commit.gpgsign=false", "-C", str(root), *args], capture_output=True, text=True,
                          check=True)
    return done.stdout


PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
HEADER = "from plug.patching import ArcticPatch\nfrom host.engine import Engine\n\n\n"
ENGINE = """
class Engine:
    def __init__(self, config):
        self.config = config
        self.steps = 0

    def compute(self, item):
        return item * 2

    def drain(self, queue):
        results = []
        while queue:
            item = queue.pop()
            results.append(self.compute(item))
        self.steps += len(results)
        return results

    def step(self, batch):
        outputs = []
        for item in batch:
            value = self.compute(item)
            outputs.append(value)
        self.steps += 1
        return outputs
"""
STEPS = ENGINE.replace("self.steps += 1", "self.steps += len(batch)")  # away from the plugin's lines
CONFIG = ENGINE.replace("value = self.compute(item)", "value = self.compute(item, self.config)")  # on them

MIRRORS = HEADER + """class EnginePatch(ArcticPatch[Engine]):
    def drain(self, queue):
        results = []
        while queue:
            item = queue.pop()
            results.append(self.compute(item))
        self.steps += len(results)
        print("drained", len(results))
        return results

    def step(self, batch):
        outputs = []
        for item in batch:
            if item is None:  # plugin: skip padding
                continue
            value = self.compute(item) + 1
            outputs.append(value)
        self.steps += 1
        return outputs
"""


FORKED = """
import math


class AttentionImpl:
    def __init__(self, num_heads, head_size, scale):
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = scale

    def forward(self, query, kv_cache, metadata):
        if metadata is None:
            return query.fill_(0)
        key_cache, value_cache = kv_cache.unbind(0)
        output = self.attend(query, key_cache, value_cache, metadata)
        return output * self.scale

    def attend(self, query, key_cache, value_cache, metadata):
        lengths = metadata.seq_lens
        blocks = metadata.block_table
        scores = query @ key_cache[blocks].transpose(-1, -2)
        scores = scores / math.sqrt(self.head_size)
        weights = scores.softmax(dim=-1)
        return weights @ value_cache[blocks][:lengths]

    def update_cache(self, key, value, kv_cache, slot_mapping):
        key_cache, value_cache = kv_cache.unbind(0)
        key_cache.index_copy_(0, slot_mapping, key)
        value_cache.index_copy_(0, slot_mapping, value)

    def reset(self):
        self.num_heads = 0
        self.head_size = 0
        self.scale = 1.0

    def describe(self):
        parts = [f"heads={self.num_heads}", f"head_size={self.head_size}"]
        if self.scale != 1.0:
            parts.append(f"scale={self.scale}")
        return ", ".join(parts)
"""
FORK = FORKED.replace("""    def forward(self, query, kv_cache, metadata):
""", """    def forward(self, query, kv_cache, metadata):
        if metadata.tree is not None:
            return self.tree_attend(query, kv_cache, metadata)
""") + """
    def tree_attend(self, query, kv_cache, metadata):
        return self.attend(query, kv_cache[0], kv_cache[1], metadata.tree)
"""
