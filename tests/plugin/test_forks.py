"""Fork detection (#8) and copied lines: which plugin files copy a host file, which lines copy a line."""

import pytest

import scenarios
from pinport.plugin.forks import find_copied_lines, find_copies, find_forks, new_host_module
from scenarios import BACKEND, BASE, FORK

NEW_BACKEND = BACKEND.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)").replace(
    "return (2, num_blocks,", "return (num_blocks, 2,")
# the second site also copies a line upstream leaves alone
SECOND_SITE = scenarios.SECOND_SITE.replace(
    "    return AttentionBackend", "    scores = scores / math.sqrt(self.head_size)\n    return AttentionBackend")


OLD = {"host/backend.py": BACKEND, "host/base.py": BASE}
NEW = {"host/backend.py": NEW_BACKEND, "host/base.py": BASE}


def test_fork_found_by_shared_definitions(inline_models):
    models, config = inline_models(OLD, NEW, {"plug/tree_backend.py": FORK, "plug/other.py": "X = 1\n"})
    [fork] = find_forks(models.plugin, models.old.index, config.fork_threshold)
    assert (fork.plugin_path, fork.host_path, fork.declared) == ("plug/tree_backend.py", "host/backend.py", False)
    assert 0.9 < fork.score <= 1.0
    assert new_host_module(fork, models.old.index, models.new.index) == "host.backend"


@pytest.mark.parametrize(("threshold", "declared", "expected"), [
    (0.99, (), []),  # the threshold is a setting
    (0.99, (("plug/tree_backend.py", "host/backend.py"),), [("plug/tree_backend.py", True)]),  # declared wins
    (0.99, (("plug.tree_backend", "host.backend"),), [("plug/tree_backend.py", True)]),  # dotted names too
])
def test_fork_threshold_and_declared_pairs(inline_models, threshold, declared, expected):
    models, _ = inline_models(OLD, NEW, {"plug/tree_backend.py": FORK})
    found = find_forks(models.plugin, models.old.index, threshold, declared)
    assert [(f.plugin_path, f.declared) for f in found] == expected


def test_small_or_unrelated_files_are_not_forks(inline_models):
    unrelated = "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(30))
    models, config = inline_models(OLD, NEW, {"plug/helpers.py": unrelated, "plug/backend.py": "import math\n"})
    assert find_forks(models.plugin, models.old.index, config.fork_threshold) == []


def test_moved_host_file_is_followed_by_name(inline_models):
    moved = {"host/v2/backend.py": NEW_BACKEND, "host/base.py": BASE}
    models, config = inline_models(OLD, moved, {"plug/tree_backend.py": FORK})
    [fork] = find_forks(models.plugin, models.old.index, config.fork_threshold)
    assert new_host_module(fork, models.old.index, models.new.index) == "host.v2.backend"


def test_copies_exclude_mirrors_inside_forks(inline_models):
    models, config = inline_models(OLD, NEW, {"plug/tree_backend.py": FORK})
    copies = find_copies(models.plugin, models.old.index, models.old.resolver, models.new.index,
                         models.new.resolver, config)
    assert [(c.kind, c.plugin.path) for c in copies.copies] == [("fork", "plug/tree_backend.py")]
    assert copies.copies[0].upstream_changed


def second_sites(inline_models, new, site=SECOND_SITE):
    models, config = inline_models(OLD, new, {"plug/tree_backend.py": FORK, "plug/kv.py": site})
    return find_copied_lines(models.plugin, models.old.index, models.new.index, {"host.backend"},
                             {"plug/tree_backend.py": [(1, 999)]})


def test_copied_line_in_a_second_file(inline_models):
    [line] = second_sites(inline_models, NEW)
    assert (line.plugin_path, line.line, line.unit) == ("plug/kv.py", 6, "write_kv")
    first = BACKEND.lstrip("\n").splitlines().index("        key_cache, value_cache = kv_cache.unbind(0)") + 1
    assert (line.old_path, line.old_line) == ("host/backend.py", first)
    assert (line.new_line, line.new_text) == (first, "key_cache, value_cache = kv_cache.unbind(1)")
    assert 0.75 <= line.score < 1.0


@pytest.mark.parametrize("site", [
    SECOND_SITE.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)"),  # already ported
    SECOND_SITE.replace("k_cache, v_cache = kv_cache.unbind(0)", "cache = layer.kv_cache.unbind(0)[0]"),  # not a copy
])
def test_copied_line_twins_not_flagged(inline_models, site):
    assert second_sites(inline_models, NEW, site) == []


def test_unchanged_upstream_line_not_flagged(inline_models):
    assert second_sites(inline_models, OLD) == []


def test_removed_line_needs_an_exact_copy(inline_models):
    removed = {"host/backend.py": NEW_BACKEND.replace("        weights = scores.softmax(dim=-1)\n", ""),
               "host/base.py": BASE}
    exact = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-1)\n"
    near = SECOND_SITE + "\n\ndef norm(scores):\n    weights = scores.softmax(dim=-2)\n"
    found = [(x.unit, x.new_line, x.new_text) for x in second_sites(inline_models, removed, exact)
             if x.unit == "norm"]
    assert found == [("norm", 0, "")]
    assert [x for x in second_sites(inline_models, removed, near) if x.unit == "norm"] == []


# -- thresholds: one case just below, one just above ---------------------------------------------------------
def test_fork_threshold_boundary(inline_models):
    models, _ = inline_models(OLD, NEW, {"plug/tree_backend.py": FORK})
    [fork] = find_forks(models.plugin, models.old.index, 0.0)
    assert 0.9 < fork.score < 1.0
    just_below = find_forks(models.plugin, models.old.index, fork.score - 0.001)
    just_above = find_forks(models.plugin, models.old.index, fork.score + 0.001)
    assert ([f.plugin_path for f in just_below], just_above) == (["plug/tree_backend.py"], [])


def _padded(extra: int) -> str:
    """The fork with `extra` lines of the plugin's own appended (two per helper function)."""
    return FORK + "".join(f"\n\ndef helper_{i}(value):\n    return value * {i + 2}\n" for i in range(extra // 2))


def test_plugin_share_boundary(inline_models):
    # the lines matched with the host file must also be a quarter of the plugin file: a fork drowned in
    # the plugin's own code is a new file that borrowed some lines
    models, _ = inline_models(OLD, NEW, {"plug/tree_backend.py": FORK})
    from pinport.plugin import forks

    ours = forks._substantive(models.plugin.index, "plug.tree_backend")
    matched = forks._alignment(forks._substantive(models.old.index, "host.backend"), ours)
    limit = 4 * matched - len(ours)  # own lines that keep the matched share at 25 % exactly
    limit -= limit % 2
    for extra, found in ((limit, True), (limit + 2, False)):
        models, _ = inline_models(OLD, NEW, {"plug/tree_backend.py": _padded(extra)})
        assert bool(find_forks(models.plugin, models.old.index, 0.5)) is found, extra


ATTEND = "output = self.attend(query, key_cache, value_cache, metadata)"  # 14 tokens, 6 of them names


@pytest.mark.parametrize(("line", "flagged"), [
    # the same shape with names renamed, still sharing two distinctive names: a token ratio from 0.75 on
    ("out = self.attend(q, k, value_cache, metadata)", True),  # 3 of 14 renamed: 0.786
    ("out = self.attend(q, k, v, metadata)", False),  # 4 of 14 renamed: 0.714
])
def test_copied_line_similarity_boundary(inline_models, line, flagged):
    from pinport.plugin.similarity import line_tokens, token_ratio

    ratio = token_ratio(line_tokens(ATTEND), line_tokens(line))
    assert (ratio >= 0.75) is flagged, ratio  # the case is on the side of the threshold it claims
    new = {**NEW, "host/backend.py": NEW_BACKEND.replace(ATTEND, ATTEND.replace("metadata)", "metadata, 1.0)"))}
    site = SECOND_SITE + f"\n\ndef attend_all(self, query, key_cache, value_cache, metadata):\n    {line}\n    return out\n"
    found = [x.new_text for x in second_sites(inline_models, new, site) if x.unit == "attend_all"]
    assert found == ([ATTEND.replace("metadata)", "metadata, 1.0)")] if flagged else [])
