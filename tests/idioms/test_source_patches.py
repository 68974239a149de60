"""Discovery of source-text patches (vllm-musa's `patches/<module>.patch.py` files of `PATCHES = [(old, new)]`):
parsed, never run; the target from the file name or a stated constant; the patcher and how it treats a miss.
With their negative twins; the check's findings are in tests/checks/test_source_patches.py."""

from __future__ import annotations

import textwrap

import pytest

from harness import load_inline_models
from pinport.plugin.source_patches import (
    Patcher,
    TextPatch,
    counterpart_block,
    find_source_patches,
    nearest_block,
    read_patch_file,
)

PAIRS = """
    PATCHES = [
        # a comment between pairs
        ("left: tl.int32 = 0", "left = 0"),
        (
            'if x == "cuda":',
            'if x in ("cuda", "musa"):',
        ),
        make_pair(),  # not a literal pair: not read
        ("only one",),
    ]
"""


def test_pairs_and_the_target_from_the_file_name():
    found = read_patch_file("plug/patches/vllm__v1__worker__gpu_worker.patch.py", textwrap.dedent(PAIRS))
    assert found is not None
    assert (found.target, found.target_line) == ("vllm.v1.worker.gpu_worker", 0)
    assert found.pairs == (TextPatch("left: tl.int32 = 0", "left = 0", 4),
                           TextPatch('if x == "cuda":', 'if x in ("cuda", "musa"):', 5))


@pytest.mark.parametrize(("text", "target"), [
    ('TARGET = "vllm.a.b"\n' + textwrap.dedent(PAIRS), "vllm.a.b"),
    ('TARGET_MODULE: str = "vllm.c"\nPATCHES: list[tuple[str, str]] = [("a", "b")]\n', "vllm.c"),
    ("PATCHES = (('a', 'b'),)\n", "vllm.worker.worker"),  # a tuple of pairs, the name's target
])
def test_a_stated_target_wins_over_the_file_name(text, target):
    found = read_patch_file("p/vllm__worker__worker.patch.py", text)
    assert found is not None and found.target == target


@pytest.mark.parametrize("text", [
    "OTHER = [('a', 'b')]\n",  # no PATCHES
    "PATCHES = build()\n",  # not a literal
    "def f():\n    PATCHES = [('a', 'b')]\n",  # not at module level
    "PATCHES = [('a', 'b')\n",  # does not parse
])
def test_no_pairs_no_patch_file(text):
    assert read_patch_file("p/vllm__x.patch.py", text) is None


SKIPPING = """
from pathlib import Path

def apply(source):
    for path in Path(__file__).parent.glob("*.patch.py"):
        for old, new in load(path):
            if old in source:
                source = source.replace(old, new)
"""


@pytest.mark.parametrize(("patcher", "expected"), [
    (SKIPPING, Patcher("plug/patches/__init__.py", 6, False)),
    (SKIPPING.replace("if old in source:", "if old not in source:\n                raise KeyError(old)"),
     Patcher("plug/patches/__init__.py", 6, True)),
    (SKIPPING.replace("if old in source:", "assert old in source\n            if True:"),
     Patcher("plug/patches/__init__.py", 6, True)),
])
def test_the_patcher_and_whether_a_miss_raises(patcher, expected):
    plugin = {"plug/patches/__init__.py": patcher, "plug/patches/host__worker.patch.py": PAIRS,
              "plug/patches/torch__nn.patch.py": PAIRS}  # not the host's: not kept
    with load_inline_models({"host/worker.py": ""}, {"host/worker.py": ""}, plugin) as (models, _):
        found = find_source_patches(models.plugin, "host")
    assert [f.path for f in found.files] == ["plug/patches/host__worker.patch.py"]
    assert found.patcher == expected


def test_without_patch_files_there_is_no_patcher():
    with load_inline_models({"host/worker.py": ""}, {"host/worker.py": ""}, {"plug/patches/__init__.py": SKIPPING}) \
            as (models, _):
        found = find_source_patches(models.plugin, "host")
    assert (found.files, found.patcher) == ((), None)


def test_where_the_text_went_and_the_nearest_block():
    before = ["def f(device):", '    if device.type == "cuda":', "        return 1"]
    after = ["def f(self):", "    x = 0", '    if self.device_type == "cuda":', "        return 1"]
    assert counterpart_block(before, after, 2, 1) == (3, 'if self.device_type == "cuda":')
    assert counterpart_block(before, ["def f(device):", "        return 1"], 2, 1) is None  # deleted
    assert nearest_block(after, 'if self.device.type == "cuda":') == (3, 'if self.device_type == "cuda":')
    assert nearest_block(after, "completely different text here") is None  # nothing clearly alike
