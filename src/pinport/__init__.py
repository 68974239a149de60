"""pinport: find where a monkeypatching plugin breaks when its pinned host moves."""

__version__ = "0.1.0"

__all__ = ["__version__", "render", "scan"]


def __getattr__(name: str) -> object:
    """`pinport.scan(...)` and `pinport.render(result, fmt)` without importing everything up front."""
    if name == "scan":
        import importlib

        return importlib.import_module("pinport.scan")  # a callable module: see pinport/scan.py
    if name == "render":
        from .report import render

        return render
    raise AttributeError(f"module 'pinport' has no attribute {name!r}")
