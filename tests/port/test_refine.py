"""Finer merges (#15 part 2): statement and token merges inside a line-level conflict, upstream
renames carried into the plugin's lines, and no proposal that loses a plugin line."""

from pinport.port import plan
from pinport.port.plan import lost_plugin_lines, merge_copy
from pinport.port.refine import Rename, find_renames, merge_tokens, refine_merge

LABELS = ("plugin", "OLD", "NEW")
BASE = """def step(self, batch):
    outputs = []
    total = self.prepare(batch)
    for item in batch:
        outputs.append(self.compute(item))
    return outputs
"""
# the plugin edits one statement, upstream the next one: git sees touching lines and conflicts
OURS = BASE.replace("    total = self.prepare(batch)\n", "    total = self.prepare(batch, padded=True)  # plugin\n")
THEIRS = BASE.replace("    for item in batch:\n", "    for item in sorted(batch):\n")


def test_edits_of_neighbouring_statements_merge():
    line, line_conflicts, refined, renames, refused = merge_copy(OURS, BASE, THEIRS, LABELS)
    assert line_conflicts == 1 and refined is not None and line.clean
    assert line.text == BASE.replace("    total = self.prepare(batch)\n",
                                     "    total = self.prepare(batch, padded=True)  # plugin\n").replace(
        "    for item in batch:\n", "    for item in sorted(batch):\n")
    assert renames == () and refused == ()


def test_a_statement_both_sides_changed_the_same_way_twice_stays_a_conflict():
    mine = BASE.replace("outputs.append(self.compute(item))", "outputs.append(self.compute(item) + 1)")
    yours = BASE.replace("outputs.append(self.compute(item))", "outputs.append(self.compute(item) * 2)")
    refined = refine_merge(mine, BASE, yours, LABELS)
    assert refined is not None and refined.conflicts == 1
    assert "<<<<<<< plugin\n        outputs.append(self.compute(item) + 1)\n||||||| OLD\n" in refined.text


def test_tokens_merge_inside_one_statement():
    assert merge_tokens("x = f(a, 1)", "x = f(a, 1) + 1", "x = f(a, 2)") == "x = f(a, 2) + 1"
    assert merge_tokens("x = f(a, 1)", "x = f(a, 3)", "x = f(a, 2)") is None  # the same token, changed twice


def test_an_upstream_rename_reaches_the_plugin_lines():
    base = "def step(self):\n    if self.is_ec_consumer:\n        return None\n    return self.run()\n"
    theirs = base.replace("self.is_ec_consumer", "self.is_mm_encoder_only")
    ours = base.replace("    return self.run()\n",
                        "    log(self.is_ec_consumer)  # plugin\n    return self.run()\n")
    assert find_renames(base, theirs) == [Rename("is_ec_consumer", "is_mm_encoder_only", "self")]
    merged, _, _, renames, _ = merge_copy(ours, base, theirs, LABELS)
    assert merged.clean and [str(r) for r in renames] == ["self.is_ec_consumer -> self.is_mm_encoder_only"]
    assert "    log(self.is_mm_encoder_only)  # plugin\n" in merged.text and "is_ec_consumer" not in merged.text


def test_a_local_name_that_exists_in_both_is_not_a_rename():
    base = "x = a + b\ny = a\n"
    theirs = "x = a + c\ny = a\n"  # `c` replaces `b` here, but... `b` is gone and `c` is new: a rename
    assert find_renames(base, theirs) == [Rename("b", "c", "")]
    assert find_renames(base, "x = b + b\ny = a\n") == []  # `b` was already used: not a rename


def test_a_finer_merge_that_loses_a_plugin_line_is_refused(monkeypatch):
    assert lost_plugin_lines(OURS, BASE, THEIRS) == ("total = self.prepare(batch, padded=True)  # plugin",)
    real = plan.refine_merge

    def lossy(ours, base, theirs, labels):
        refined = real(ours, base, theirs, labels)
        refined.text = refined.text.replace("    total = self.prepare(batch, padded=True)  # plugin\n", "")
        return refined

    monkeypatch.setattr(plan, "refine_merge", lossy)
    merged, line_conflicts, refined, _, refused = merge_copy(OURS, BASE, THEIRS, LABELS)
    assert refused == ("total = self.prepare(batch, padded=True)  # plugin",)
    assert merged.conflicts == line_conflicts == 1  # git's line merge is kept, conflict and all
    assert "padded=True" in merged.text
