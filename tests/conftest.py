import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import load_inline_models  # noqa: E402  (importable once tests/ is on the path)


@pytest.fixture
def inline_models():
    """inline_models(old, new, plugin, **settings) -> (Models, Settings), on files that live as long as the test."""
    with ExitStack() as stack:
        yield lambda old, new, plugin, **settings: stack.enter_context(
            load_inline_models(old, new, plugin, **settings))
