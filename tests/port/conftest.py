"""Models from inline sources kept on disk for the test's lifetime (merges and --apply need files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinport.config import Settings
from pinport.scan import Models
from port.gitrepo import git


@pytest.fixture
def load(inline_models):
    """load(old, new, plugin, git_repo=False, **settings) -> (models, settings, plugin root)."""

    def make(old: dict[str, str], new: dict[str, str], plugin: dict[str, str], *, git_repo: bool = False,
             **settings: object) -> tuple[Models, Settings, Path]:
        models, config = inline_models(old, new, plugin, **settings)
        root = models.plugin.index.tree.root
        if git_repo:
            git(root, "init", "-q")
            git(root, "add", "-A")
            git(root, "commit", "-qm", "plugin")
        return models, config, root

    return make
