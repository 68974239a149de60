"""Finer merges (#15 part 2): statement and token merges inside a line-level conflict, upstream
renames carried into the plugin's lines, and no proposal that loses a plugin line."""

from pinport.port import plan
from pinport.port.plan import lost_plugin_lines, merge_copy
from pinport.port.refine import (
    Rename,
    find_renames,
    merge_import_names,
    merge_keywords,
    merge_tokens,
    refine_merge,
    resolved,
    sound,
)

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


# -- layout, comments, import lists, both-added statements, structure (#15 bar: <= 25 on the real job) --
REFLOW_BASE = """def build(self, n):
    total = compute(n, self.size, self.scale)
    # the aot schedule is not worth it here
    schedule = self.aot and not self.fast
    return total, schedule
"""


def test_a_statement_the_plugin_only_re_laid_out_takes_upstreams_edit():
    ours = REFLOW_BASE.replace("    total = compute(n, self.size, self.scale)\n",
                               "    total = compute(\n        n,\n        self.size,\n        self.scale,\n    )\n")
    theirs = REFLOW_BASE.replace("compute(n, self.size, self.scale)", "compute(n, self.size, self.scale, dtype=None)")
    merged, line_conflicts, refined, _, refused = merge_copy(ours, REFLOW_BASE, theirs, LABELS)
    assert line_conflicts == 1 and merged.clean and refused == ()
    assert merged.text == theirs  # upstream's edit, in upstream's layout: the plugin's reflow carried nothing
    assert refined is not None and refined.reflowed == ((ours.rstrip("\n"), REFLOW_BASE.rstrip("\n")),)
    # the loss check re-verifies the claim: a "reflow" that changed code does not excuse its lines
    bogus = (("    total = compute(\n        n + 1,\n    )", "    total = compute(n)"),)
    changed = ours.replace("        n,\n", "        n + 1,\n")
    assert "n + 1," in lost_plugin_lines(changed, REFLOW_BASE, theirs, reflowed=bogus)


def test_a_reflow_that_adds_a_comment_is_the_plugins_own_and_still_conflicts():
    ours = REFLOW_BASE.replace("    total = compute(n, self.size, self.scale)\n",
                               "    total = compute(n, self.size, self.scale)  # plugin: scale kept\n")
    theirs = REFLOW_BASE.replace("self.scale)", "self.scale, dtype=None)")
    merged, _, _, _, refused = merge_copy(ours, REFLOW_BASE, theirs, LABELS)
    assert refused == () and "# plugin: scale kept" in merged.text
    assert "dtype=None" in merged.text  # merged by tokens: the comment is the plugin's, the argument upstream's
    assert merged.text == theirs.replace("dtype=None)\n", "dtype=None)  # plugin: scale kept\n")


def test_upstream_removing_what_the_plugin_only_reformatted_is_a_removal():
    base = "def f(x):\n    return g(x)\n\n\ndef g(x):\n    # why g\n    return x + 1\n"
    ours = "def f(x):\n    return g(x) * 2  # plugin\n\n\ndef g(\n    x,\n):\n    return x + 1\n"
    theirs = "def f(x):\n    return x + 1\n"
    merged, _, refined, _, refused = merge_copy(ours, base, theirs, LABELS)
    assert refused == () and refined is not None
    assert "def g" not in merged.text and "    return g(x) * 2  # plugin" in merged.text.replace(
        "\n>>>>>>>", "").replace("", "")
    assert merged.conflicts == 1  # f: both sides changed its return (a real conflict), g: upstream's removal


def test_upstream_comment_edits_never_block_the_plugins_change():
    base = "def f(self):\n    # the overhead is not worth it\n    s = self.aot and not self.fast\n    return s\n"
    ours = "def f(self):\n    s = self.use_aot and not self.fast\n    return s\n"  # and dropped the comment
    theirs = ("def f(self):\n    # not worth the overhead\n    # nor under batch invariance\n"
              "    s = (\n        self.aot and not self.fast and not envs.INVARIANT\n    )\n    return s\n")
    merged, line_conflicts, refined, _, refused = merge_copy(ours, base, theirs, LABELS)
    assert line_conflicts == 1 and merged.clean and refused == () and refined.token_merges == 1
    assert merged.text == ("def f(self):\n    s = (\n        self.use_aot and not self.fast and not envs.INVARIANT\n"
                           "    )\n    return s\n")
    # a header whose upstream change is comments alone keeps the plugin's layout
    head = "class B(Base):\n    # FA3: all cases\n    x = 1\n"
    mine = "class B(\n    Base\n):\n    x = 1\n    y = 2  # plugin\n"
    yours = "class B(Base):\n    # FA3/FA4: all cases\n    x = 1\n"
    merged, _, _, _, refused = merge_copy(mine, head, yours, LABELS)
    assert merged.clean and merged.text == mine and refused == ()


def test_the_names_of_one_import_merge_as_a_set():
    base = "from m import (\n    old_flag,\n    version,\n)\nx = 1\n"
    ours = "from m import (\n    new_flag,\n    version,\n)\nx = 1\n"  # the plugin already took the rename
    theirs = "from m import (\n    PAGE,\n    new_flag,\n    other,\n    version,\n)\nx = 2\n"
    merged, line_conflicts, _, _, refused = merge_copy(ours, base, theirs, LABELS)
    assert line_conflicts == 1 and merged.clean and refused == ()
    assert merged.text == theirs
    mine = ours.replace("    version,\n", "    version,\n    plugin_only,\n")
    merged, _, _, _, refused = merge_copy(mine, base, theirs, LABELS)
    assert merged.clean and refused == ()
    assert merged.text == "from m import (\n    PAGE,\n    new_flag,\n    other,\n    version,\n    plugin_only,\n)\nx = 2\n"
    assert merge_import_names("from m import a", "from n import a, b", "from m import a, c") is None  # other module


def test_statements_both_sides_added_merge_when_one_sides_are_among_the_others():
    base = "def f(self, cfg):\n    a = 1\n    return a\n"
    ours = "def f(self, cfg):\n    a = 1\n    from m import up\n    size = max(cfg.n, 0)\n    return up(a, size)\n"
    theirs = "def f(self, cfg):\n    a = 1\n    size = max(cfg.n, 0)\n    return a\n"
    merged, _, _, _, refused = merge_copy(ours, base, theirs, LABELS)
    assert merged.clean and refused == () and merged.text == ours


def test_a_merge_that_breaks_the_statement_structure_is_not_used():
    assert not sound(["if a:", "    x()", "else:", "    y()", "elif b:", "    z()"], "if a:\n    x()\n", "y()")
    assert sound(["if a:", "    x()", "<<<<<<< plugin", "elif b:", "    z()", "||||||| OLD", "=======",
                  ">>>>>>> NEW"], "if a:\n    x()\n", "y()")
    assert resolved(["a", "<<<<<<< p", "b", "||||||| o", "c", "=======", "d", ">>>>>>> n", "e"], 2) == ["a", "d", "e"]


def test_a_line_that_mostly_changed_is_no_rename_evidence():
    base = "m = M(\n    use_x=use_x,\n    keep=keep,\n)\nfrom a import (\n    flag_fp8,\n)\n"
    theirs = "m = M(\n    n_y=n_y,\n    keep=keep,\n)\nfrom a import (\n    PAGE,\n)\n"
    assert find_renames(base, theirs) == []


def test_words_of_a_docstring_are_no_rename():
    base = 'def f():\n    """Capture\n    the graph here.\n    """\n    return 1\n'
    theirs = base.replace("    the graph here.", "    some graph here.")
    assert find_renames(base, theirs) == []


def test_an_upstream_expression_replacement_reaches_the_plugin_lines():
    base = ("def run(self, n):\n    splits = 1 if is_invariant() else n\n    log(is_invariant())\n"
            "    return splits\n")
    theirs = base.replace("is_invariant()", "envs.INVARIANT")
    ours = base.replace("    return splits\n", "    extra = 0 if is_invariant( ) else n  # plugin\n    return splits\n")
    assert find_renames(base, theirs) == [Rename("is_invariant()", "envs.INVARIANT", "")]
    merged, _, _, renames, refused = merge_copy(ours, base, theirs, LABELS)
    assert merged.clean and refused == () and [str(r) for r in renames] == ["is_invariant() -> envs.INVARIANT"]
    assert merged.text == theirs.replace("    return splits\n",
                                         "    extra = 0 if envs.INVARIANT else n  # plugin\n    return splits\n")
    # an argument added with it is a change of meaning, not a rename
    assert find_renames("return supports_fp8()\n", "return supports_kv(dtype)\n") == []
    assert find_renames(base, base.replace("is_invariant()", "x.is_invariant()")) == []  # not a whole expression


def test_a_one_line_import_of_the_plugins_merged_into_a_list_is_not_lost():
    base = "from m import a\nx = 1\n"
    ours = "from m import a, plugin_name\nx = 1\n"
    theirs = "from m import a, b\nx = 2\n"
    merged, _, _, _, refused = merge_copy(ours, base, theirs, LABELS)
    assert refused == () and merged.clean
    assert merged.text == "from m import (\n    a,\n    plugin_name,\n    b,\n)\nx = 2\n"  # after the name it follows
    # the check still counts an import whose name the merge dropped
    assert lost_plugin_lines(ours, base, "from m import (\n    a,\n    b,\n)\nx = 2\n") == (
        "from m import a, plugin_name",)


def test_the_keyword_arguments_of_one_call_merge_by_name():
    base = ("def build(self):\n    m = Meta(\n        a=a,\n        use_c=use_c,\n        p=p,\n        q=q,\n    )\n"
            "    return m\n")
    # the plugin took upstream's rename of one argument and added two; upstream also added one, dropped one
    ours = base.replace("        use_c=use_c,\n", "        n_d=n_d,\n").replace("        q=q,\n",
                                                                               "        q=q,\n        f1=f1,\n")
    theirs = base.replace("        use_c=use_c,\n        p=p,\n", "        n_d=n_d,\n        n_e=n_e,\n")
    merged, line_conflicts, _, _, refused = merge_copy(ours, base, theirs, LABELS)
    assert line_conflicts == 1 and merged.clean and refused == ()
    assert merged.text == ("def build(self):\n    m = Meta(\n        a=a,\n        n_d=n_d,\n        n_e=n_e,\n"
                           "        q=q,\n        f1=f1,\n    )\n    return m\n")
    assert merge_keywords("x = f(1, a=2)", "x = f(1, a=3)", "x = f(1, a=4)") is None  # one argument, changed twice
    assert merge_keywords("x = f(1, a=2)", "x = f(1, a=3)", "x = f(1, a=2, b=5)") == "x = f(1, a=3, b=5)"
    assert merge_keywords("x = f(1)", "x = g(1, a=3)", "x = f(1, b=5)") is None  # another callee
