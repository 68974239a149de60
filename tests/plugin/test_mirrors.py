"""Mirror detection (#12): which overrides copy an upstream method, how alike, and what upstream changed."""

import difflib

import pytest

from pinport.plugin.mirrors import (
    find_mirrors,
    function_span,
    mirror_copy,
    span_lines,
    upstream_change,
)
from pinport.plugin.similarity import runtime_form
from scenarios import ENGINE, HEADER, MIRROR, PATCHING


@pytest.fixture
def load(inline_models):
    """load(old, new, plugin) -> Models, with the plugin's patching base added."""
    return lambda old, new, plugin: inline_models(old, new, {**PATCHING, **plugin})[0]


@pytest.fixture
def mirrors_of(load):
    def find(plugin, old=ENGINE, threshold=0.6):
        models = load({"host/engine.py": old}, {"host/engine.py": old}, {"plug/patch.py": plugin})
        return find_mirrors(models.plugin, models.old.index, models.old.resolver, threshold)

    return find


def test_mirror_of_the_patched_member(mirrors_of):
    found = mirrors_of(MIRROR)
    assert len(found) == 1
    mirror = found[0]
    assert (mirror.upstream_path, mirror.matched_by) == ("host.engine.Engine.step", "target")
    assert (mirror.plugin.path, mirror.plugin.start, mirror.plugin.end) == ("plug/patch.py", 6, 14)
    assert (mirror.upstream.path, mirror.upstream.start, mirror.upstream.end) == ("host/engine.py", 9, 15)
    assert 0.8 < mirror.score < 1.0


@pytest.mark.parametrize(("plugin", "threshold", "expected"), [
    (MIRROR, 0.6, 1),
    (MIRROR, 0.99, 0),  # the threshold is a setting
    # a wrapper that calls the original shares only its signature: not a mirror
    (HEADER + "class EnginePatch(ArcticPatch[Engine]):\n    _orig_step = Engine.step\n\n"
              "    def step(self, batch):\n        batch = [b for b in batch if b is not None]\n"
              "        return self._orig_step(batch)\n", 0.6, 0),
    # a rewrite of the same method is not a copy
    (HEADER + "class EnginePatch(ArcticPatch[Engine]):\n    def step(self, batch):\n"
              "        self.steps = self.steps + 1\n        results = list(map(self.compute, batch))\n"
              "        print('stepped', len(results), 'items in', self.config)\n        return results\n", 0.6, 0),
])
def test_mirror_threshold_and_non_mirrors(mirrors_of, plugin, threshold, expected):
    assert len(mirrors_of(plugin, threshold=threshold)) == expected


def test_added_member_matches_its_best_upstream_original(mirrors_of):
    plugin = MIRROR.replace("def step(self, batch):", "def step_fast(self, batch):")
    found = mirrors_of(plugin)
    assert [(m.upstream_path, m.matched_by) for m in found] == [("host.engine.Engine.step", "best match")]


def test_decorators_belong_to_the_span(load):
    source = "class A:\n    @property\n    @cache(\n        size=2,\n    )\n    def f(self):\n        return 1\n"
    models = load({"host/a.py": source}, {"host/a.py": source}, {})
    fn = models.old.index.modules["host.a"].classes["A"].methods["f"]
    span = function_span(models.old.index, "host.a", fn, "A.f")
    assert (span.start, span.end) == (2, 7)


def test_upstream_change_hunks_in_file_lines_and_reflection(load):
    new = ENGINE.replace("self.steps += 1", "self.steps += len(batch)")
    models = load({"host/engine.py": ENGINE}, {"host/engine.py": new}, {"plug/patch.py": MIRROR})
    [mirror] = find_mirrors(models.plugin, models.old.index, models.old.resolver, 0.6)
    copy = mirror_copy(mirror, models.plugin.index, models.old.index, models.new.index, models.new.resolver)
    assert copy.upstream_changed and copy.new is not None
    change = upstream_change(copy, models.old.index, models.new.index)
    assert change is not None and len(change.hunks) == 1 and change.pending == change.hunks
    # the same hunk header difflib writes for the whole file
    whole = list(difflib.unified_diff(ENGINE.lstrip("\n").splitlines(), new.lstrip("\n").splitlines(), lineterm=""))
    assert change.hunks[0].header == next(x for x in whole if x.startswith("@@"))
    assert "-        self.steps += 1" in change.hunks[0].lines
    assert "+        self.steps += len(batch)" in change.hunks[0].lines
    # a plugin copy that already has the NEW line: the hunk is reflected
    ported = MIRROR.replace("self.steps += 1", "self.steps += len(batch)")
    models = load({"host/engine.py": ENGINE}, {"host/engine.py": new}, {"plug/patch.py": ported})
    [mirror] = find_mirrors(models.plugin, models.old.index, models.old.resolver, 0.6)
    copy = mirror_copy(mirror, models.plugin.index, models.old.index, models.new.index, models.new.resolver)
    change = upstream_change(copy, models.old.index, models.new.index)
    assert change is not None and change.hunks[0].reflected and not change.pending
    assert span_lines(models.plugin.index, copy.plugin)[-1].strip() == "return outputs"


def test_layout_only_upstream_change_is_no_change(load):
    new = ENGINE.replace("value = self.compute(item)", "value = self.compute( item )  # same")
    models = load({"host/engine.py": ENGINE}, {"host/engine.py": new}, {"plug/patch.py": MIRROR})
    [mirror] = find_mirrors(models.plugin, models.old.index, models.old.resolver, 0.6)
    copy = mirror_copy(mirror, models.plugin.index, models.old.index, models.new.index, models.new.resolver)
    assert copy.theirs is not None and copy.theirs != copy.base and not copy.upstream_changed


def test_mirror_threshold_boundary(mirrors_of):
    [mirror] = mirrors_of(MIRROR, threshold=0.0)
    assert [m.upstream_path for m in mirrors_of(MIRROR, threshold=mirror.score - 0.001)] == ["host.engine.Engine.step"]
    assert mirrors_of(MIRROR, threshold=mirror.score + 0.001) == []


def test_copy_sources_are_kept_in_the_index_cache_for_the_next_scan(tmp_path, monkeypatch):
    """A warm scan of the same plugin and OLD reads its forks and mirrors from the cache (the same
    ones, the mirror on the surface's own patch); a row naming a patch the plugin does not have
    there is found again."""
    from harness import HOST, PLUGIN, SYNTHETIC, inline_tree
    from pinport.config import Settings
    from pinport.model.index import IndexCache
    from pinport.plugin import forks
    from pinport.scan import load_models

    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC)
    host = {"host/engine.py": ENGINE}
    old, new = inline_tree(tmp_path / "old", HOST, "host 1.0", host), inline_tree(tmp_path / "new", HOST, "host 2.0", host)
    plugin = inline_tree(tmp_path / "plugin", PLUGIN, "plugin", {**PATCHING, "plug/patch.py": MIRROR})
    cache = IndexCache(tmp_path / "index.sqlite")

    key = "copy-sources-test"

    def sources():
        models = load_models(plugin, old, new, settings, cache=cache)
        return models, forks.stored_copy_sources(models.plugin, models.old.index, models.old.resolver, settings,
                                                 cache, key)

    _, first = sources()
    assert [m.upstream_path for m in first[1]] == ["host.engine.Engine.step"]
    found = forks.find_copy_sources
    monkeypatch.setattr(forks, "find_copy_sources", lambda *a: pytest.fail("compared the files again"))
    models, again = sources()
    assert again == first and again[1][0].patch is models.plugin.surface.patches[
        models.plugin.surface.patches.index(first[1][0].patch)]
    monkeypatch.setattr(forks, "find_copy_sources", found)
    span = '["plug.patch", "plug/patch.py", 1, 2, "x"]'
    for row in (f'[[], [[0, ["plug.other", 1, "x", "y"], {span}, {span}, "p", 0.5, "target"]]]'.encode(),
                f'[[], [[99, ["plug.patch", 6, "x", "y"], {span}, {span}, "p", 0.5, "target"]]]'.encode(), b"[[], [[99"):
        cache.put_many([(key, row)])
        assert sources()[1] == first


def _change(load, old: str, new: str, plugin: str, context: int = 3):
    """The upstream change of the one mirror of Engine.step, OLD `old` and NEW `new`."""
    models = load({"host/engine.py": old}, {"host/engine.py": new}, {"plug/patch.py": plugin})
    [mirror] = find_mirrors(models.plugin, models.old.index, models.old.resolver, 0.6)
    copy = mirror_copy(mirror, models.plugin.index, models.old.index, models.new.index, models.new.resolver)
    return upstream_change(copy, models.old.index, models.new.index, context)


_GUARDED = "self.steps += getattr(self.config, 'stride', 1)"
_PLAIN = "self.steps += self.config.stride"
_BOUND = "stride = self.config.stride\n        self.steps += stride"


def test_a_refactor_only_upstream_hunk_is_not_to_port(load):
    """Upstream dropped a getattr guard and bound the read to a local, or inlined a local bound to a read:
    the copy computes the same."""
    for old, new in ((_GUARDED, _BOUND), (_BOUND, _PLAIN)):
        change = _change(load, ENGINE.replace("self.steps += 1", old), ENGINE.replace("self.steps += 1", new),
                         MIRROR.replace("self.steps += 1", old))
        assert change is not None and len(change.hunks) == 1 and change.pending == ()
        [hunk] = change.hunks
        assert (hunk.refactor_only, hunk.reflected, hunk.cosmetic, hunk.speed_only) == (True, False, False, False)
        assert change.diff_lines()[2].endswith("nothing to port (a refactor: a local bound to a read, or the read "
                                               "inlined; a getattr guard dropped)")


def test_a_refactor_that_may_change_values_is_to_port(load):
    """An added guard (the attribute may now be missing), a read moved across calls, and a local bound in
    one hunk and used in another that changes what runs (judged together, neither is a refactor)."""
    moved = ENGINE.replace("outputs = []", "outputs = []\n        stride = self.config.stride").replace(
        "self.steps += 1", "self.steps += stride")  # read before the loop's calls, used after them
    counted = ENGINE.replace("outputs = []", "outputs = []\n        count = self.steps").replace(
        "self.steps += 1", "self.steps = count + len(batch)")
    for old, new, hunks in ((_PLAIN, ENGINE.replace("self.steps += 1", _GUARDED), 1), (_PLAIN, moved, 2),
                            ("self.steps += 1", counted, 2)):
        change = _change(load, ENGINE.replace("self.steps += 1", old), new, MIRROR.replace("self.steps += 1", old),
                         context=0)
        assert change is not None and len(change.hunks) == hunks and change.pending == change.hunks, new
        assert not any(h.refactor_only for h in change.hunks)
    # alone, the hunk binding `count` adds an unused read (nothing): only its partner shows what it is for
    assert runtime_form(ENGINE, refactor=True) == runtime_form(ENGINE.replace(
        "outputs = []", "outputs = []\n        count = self.steps"), refactor=True)


_COUNTED = "self.steps += max_count(batch, limit=self.config.limit)"


def test_a_hunk_ported_by_hand_is_in_the_copy(load):
    """The copy names every identifier the hunk brings to upstream's code (reformatted, so no line matches)."""
    by_hand = MIRROR.replace("self.steps += 1", "self.steps += max_count(\n            batch, limit=self.config.limit)")
    change = _change(load, ENGINE, ENGINE.replace("self.steps += 1", _COUNTED), by_hand)
    assert change is not None and len(change.hunks) == 1 and change.pending == () and change.hunks[0].reflected
    assert change.diff_lines()[2].endswith("already in the plugin copy")


def test_names_alone_are_no_port_where_the_copy_may_lack_the_hunk(load):
    """The copy still has a line the hunk removes; the hunk's new name is in the copy only through another
    hunk's added line (a parameter ported, its use not); a hand-ported local whose other hunk is missing."""
    kept = MIRROR.replace("self.steps += 1", "self.steps += 1\n        self.last = max_count(batch, limit=self.config.limit)")
    change = _change(load, ENGINE, ENGINE.replace("self.steps += 1", _COUNTED), kept)
    assert change is not None and change.pending == change.hunks and not change.hunks[0].reflected
    limited = ENGINE.replace("def step(self, batch):", "def step(self, batch, limit=None):").replace(
        "self.steps += 1", "self.steps += min(len(batch), limit)")
    copy = MIRROR.replace("def step(self, batch):", "def step(self, batch, limit=None):").replace(
        "self.steps += 1", "self.steps += len(batch)")
    change = _change(load, ENGINE, limited, copy, context=0)
    assert change is not None and [h.reflected for h in change.hunks] == [True, False] and len(change.pending) == 1
    clamped = ENGINE.replace("outputs = []", "outputs = []\n        limit = clamp(self.config.limit)").replace(
        "self.steps += 1", "self.steps += limit")
    half = MIRROR.replace("outputs = []", "outputs = []\n        limit = clamp(\n            self.config.limit)")
    change = _change(load, ENGINE, clamped, half, context=0)
    assert change is not None and len(change.hunks) == 2 and change.pending == change.hunks
    alone = _change(load, ENGINE, ENGINE.replace("outputs = []", "outputs = []\n        limit = clamp(self.config.limit)"),
                    half)
    assert alone is not None and alone.pending == ()  # without its partner the same hand port is in the copy


def test_an_upstream_hunk_adding_or_dropping_parameters_only_is_not_to_port(load):
    """A parameter added (unused there) or dropped, or a None default refused by a raise: the code computes the
    same; whether callers pass what the copy takes is what the signature checks judge of the copy itself."""
    hinted = ENGINE.replace("def step(self, batch):", "def step(self, batch, hint=None):")
    refused = ENGINE.replace("def step(self, batch):", "def step(self, batch=None):\n        if batch is None:\n"
                             "            raise ValueError('step needs a batch')")  # required all the same
    for old, new, plugin in ((ENGINE, hinted, MIRROR), (ENGINE, refused, MIRROR),
                             (hinted, ENGINE, MIRROR.replace("def step(self, batch):", "def step(self, batch, hint=None):"))):
        change = _change(load, old, new, plugin)
        assert change is not None and len(change.hunks) == 1 and change.pending == ()
        [hunk] = change.hunks
        assert (hunk.parameters_only, hunk.reflected, hunk.cosmetic, hunk.refactor_only) == (True, False, False, False)
        assert change.diff_lines()[2].endswith("nothing to port (only parameters added or dropped: the signature "
                                               "checks judge what callers pass)")


def test_a_parameter_change_that_changes_values_is_to_port(load):
    """A kept parameter's default changed (a caller omitting it gets another value), a parameter made
    keyword-only, parameters reordered (positional calls bind otherwise), and a parameter added and used in the
    same hunk: each changes what the copy computes."""
    plain, limited = "def step(self, batch):", "def step(self, batch, limit=1):"
    for old, new in ((limited, "def step(self, batch, limit=2):"), (limited, "def step(self, batch, *, limit=1):"),
                     (limited, "def step(self, limit=1, batch=None, hint=None):"),  # reordered (and a default)
                     ("def step(self, batch, limit):", "def step(self, limit, batch):"),
                     (plain, "def step(self, batch, extra=0):")):
        upstream = ENGINE.replace(plain, new)
        if "extra" in new:
            upstream = upstream.replace("self.steps += 1", "self.steps += 1 + extra")
        change = _change(load, ENGINE.replace(plain, old), upstream, MIRROR.replace(plain, old))
        assert change is not None and change.hunks and change.pending == change.hunks, new
        assert not any(h.parameters_only for h in change.hunks)


_STEPS_COUNTED = ENGINE.replace("self.steps += 1", "self.steps += count_steps(batch)")


def test_an_upstream_hunk_the_copy_names_in_its_comments_is_not_to_port(load):
    """The copy keeps its line and its comment names what upstream's hunk brings (`count_steps`): it does
    without the change on purpose."""
    for said in ("self.steps += 1  # one step per call here, not count_steps(batch)",
                 'self.steps += 1\n        """Upstream counts by count_steps; the plugin counts calls."""'):
        change = _change(load, ENGINE, _STEPS_COUNTED, MIRROR.replace("self.steps += 1", said))
        assert change is not None and len(change.hunks) == 1 and change.pending == ()
        [hunk] = change.hunks
        assert hunk.acknowledged == ("count_steps",) and not (hunk.reflected or hunk.parameters_only)
        assert change.diff_lines()[2].endswith("not in the plugin copy, on purpose: its comments name `count_steps`")


def test_an_upstream_hunk_the_copy_does_not_name_in_words_is_to_port(load):
    """A comment naming an English word (`stride`), one naming only some of the hunk's new names, and a copy
    using the name in its code while it keeps the line upstream removed: each leaves the hunk to port."""
    strided = ENGINE.replace("self.steps += 1", "self.steps += stride(batch)")
    scaled = ENGINE.replace("self.steps += 1", "self.steps += count_steps(batch, step_scale)")
    for new, said in ((strided, "self.steps += 1  # no stride here"),
                      (scaled, "self.steps += 1  # not count_steps"),
                      (_STEPS_COUNTED, "self.steps += 1\n        count_steps(batch)")):
        change = _change(load, ENGINE, new, MIRROR.replace("self.steps += 1", said))
        assert change is not None and change.hunks and change.pending == change.hunks, said
        assert not any(h.acknowledged for h in change.hunks)
