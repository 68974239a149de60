"""Models from inline sources kept on disk for the test's lifetime (merges and --apply need files)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness import HOST, PLUGIN, _tree
from pinport.config import Settings
from pinport.scan import Models, load_models
from port.scenarios import git


@pytest.fixture
def load(tmp_path: Path):
    """load(old, new, plugin, git_repo=False, **settings) -> (models, settings, plugin root)."""
    counter = iter(range(1000))

    def make(old: dict[str, str], new: dict[str, str], plugin: dict[str, str], *, git_repo: bool = False,
             **settings: object) -> tuple[Models, Settings, Path]:
        base = tmp_path / f"case{next(counter)}"
        config = replace(Settings(host=HOST, plugin_package=PLUGIN, pin_sources=()), **settings)
        old_tree = _tree(base / "old", HOST, "host 1.0", old)
        new_tree = _tree(base / "new", HOST, "host 2.0", new)
        plugin_tree = _tree(base / "plugin", PLUGIN, "plugin", plugin)
        if git_repo:
            git(plugin_tree.root, "init", "-q")
            git(plugin_tree.root, "add", "-A")
            git(plugin_tree.root, "commit", "-qm", "plugin")
        return load_models(plugin_tree, old_tree, new_tree, config), config, plugin_tree.root

    return make
