"""pinport: find where a monkeypatching plugin breaks when its pinned host moves."""

__version__ = "0.1.0"
