"""Fork detection (#8) and copied lines: which plugin files copy a host file, which lines copy a line."""

from dataclasses import replace

import pytest

from harness import HOST, PLUGIN, _tree
from pinport.config import Settings
from pinport.plugin.forks import find_copied_lines, find_copies, find_forks, new_host_module
from pinport.scan import load_models

BACKEND = """
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
    def __init__(self, num_heads, head_size, scale):
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = scale
        self.sliding_window = (-1, -1)

    def forward(self, query, key, value, kv_cache, metadata):
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
"""
BASE = "class ImplBase:\n    def reset(self):\n        return None\n"
NEW_BACKEND = BACKEND.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)").replace(
    "return (2, num_blocks,", "return (num_blocks, 2,")

# The plugin's fork: tree attention on top of the upstream file, with a changed head-size rule.
FORK = BACKEND.replace("""        key_cache, value_cache = kv_cache.unbind(0)
        output = self.attend(""", """        if metadata.tree is not None:
            return self.tree_attend(query, kv_cache, metadata)
        key_cache, value_cache = kv_cache.unbind(0)
        output = self.attend(""").replace("head_size <= 256", "head_size <= 128") + """
    def tree_attend(self, query, kv_cache, metadata):
        return self.attend(query, kv_cache[0], kv_cache[1], metadata.tree)
"""
SECOND_SITE = """
from host.backend import AttentionBackend


def write_kv(layer, key, value, slots):
    kv_cache = layer.kv_cache
    k_cache, v_cache = kv_cache.unbind(0)
    k_cache.index_copy_(0, slots, key)
    scores = scores / math.sqrt(self.head_size)
    return AttentionBackend.get_kv_cache_shape(1, 16, 8, 64)
"""


@pytest.fixture
def load(tmp_path):
    cases = iter(range(100))

    def make(old, new, plugin, **settings):
        base = tmp_path / str(next(cases))
        config = replace(Settings(host=HOST, plugin_package=PLUGIN, pin_sources=()), **settings)
        trees = [_tree(base / "old", HOST, "host 1.0", old), _tree(base / "new", HOST, "host 2.0", new),
                 _tree(base / "plugin", PLUGIN, "plugin", plugin)]
        return load_models(trees[2], trees[0], trees[1], config), config

    return make


OLD = {"host/backend.py": BACKEND, "host/base.py": BASE}
NEW = {"host/backend.py": NEW_BACKEND, "host/base.py": BASE}


def test_fork_found_by_shared_definitions(load):
    models, config = load(OLD, NEW, {"plug/tree_backend.py": FORK, "plug/other.py": "X = 1\n"})
    [fork] = find_forks(models.plugin, models.old.index, config.fork_threshold)
    assert (fork.plugin_path, fork.host_path, fork.declared) == ("plug/tree_backend.py", "host/backend.py", False)
    assert 0.9 < fork.score <= 1.0
    assert new_host_module(fork, models.old.index, models.new.index) == "host.backend"


@pytest.mark.parametrize(("threshold", "declared", "expected"), [
    (0.99, (), []),  # the threshold is a setting
    (0.99, (("plug/tree_backend.py", "host/backend.py"),), [("plug/tree_backend.py", True)]),  # declared wins
    (0.99, (("plug.tree_backend", "host.backend"),), [("plug/tree_backend.py", True)]),  # dotted names too
])
def test_fork_threshold_and_declared_pairs(load, threshold, declared, expected):
    models, _ = load(OLD, NEW, {"plug/tree_backend.py": FORK})
    found = find_forks(models.plugin, models.old.index, threshold, declared)
    assert [(f.plugin_path, f.declared) for f in found] == expected


def test_small_or_unrelated_files_are_not_forks(load):
    unrelated = "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(30))
    models, config = load(OLD, NEW, {"plug/helpers.py": unrelated, "plug/backend.py": "import math\n"})
    assert find_forks(models.plugin, models.old.index, config.fork_threshold) == []


def test_moved_host_file_is_followed_by_name(load):
    moved = {"host/v2/backend.py": NEW_BACKEND, "host/base.py": BASE}
    models, config = load(OLD, moved, {"plug/tree_backend.py": FORK})
    [fork] = find_forks(models.plugin, models.old.index, config.fork_threshold)
    assert new_host_module(fork, models.old.index, models.new.index) == "host.v2.backend"


def test_copies_exclude_mirrors_inside_forks(load):
    models, config = load(OLD, NEW, {"plug/tree_backend.py": FORK})
    copies = find_copies(models.plugin, models.old.index, models.old.resolver, models.new.index,
                         models.new.resolver, config)
    assert [(c.kind, c.plugin.path) for c in copies.copies] == [("fork", "plug/tree_backend.py")]
    assert copies.copies[0].upstream_changed


def second_sites(load, new, site=SECOND_SITE):
    models, config = load(OLD, new, {"plug/tree_backend.py": FORK, "plug/kv.py": site})
    return find_copied_lines(models.plugin, models.old.index, models.new.index, {"host.backend"},
                             {"plug/tree_backend.py": [(1, 999)]})


def test_copied_line_in_a_second_file(load):
    [line] = second_sites(load, NEW)
    assert (line.plugin_path, line.line, line.unit) == ("plug/kv.py", 6, "write_kv")
    first = BACKEND.lstrip("\n").splitlines().index("        key_cache, value_cache = kv_cache.unbind(0)") + 1
    assert (line.old_path, line.old_line) == ("host/backend.py", first)
    assert (line.new_line, line.new_text) == (first, "key_cache, value_cache = kv_cache.unbind(1)")
    assert 0.75 <= line.score < 1.0


@pytest.mark.parametrize("site", [
    SECOND_SITE.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)"),  # already ported
    SECOND_SITE.replace("k_cache, v_cache = kv_cache.unbind(0)", "cache = layer.kv_cache.unbind(0)[0]"),  # not a copy
])
def test_copied_line_twins_not_flagged(load, site):
    assert second_sites(load, NEW, site) == []


def test_unchanged_upstream_line_not_flagged(load):
    assert second_sites(load, OLD) == []


def test_removed_line_needs_an_exact_copy(load):
    removed = {"host/backend.py": NEW_BACKEND.replace("        weights = scores.softmax(dim=-1)\n", ""),
               "host/base.py": BASE}
    exact = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-1)\n"
    near = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-2)\n"
    found = [(x.unit, x.new_line, x.new_text) for x in second_sites(load, removed, exact) if x.unit == "norm"]
    assert found == [("norm", 0, "")]
    assert [x for x in second_sites(load, removed, near) if x.unit == "norm"] == []
