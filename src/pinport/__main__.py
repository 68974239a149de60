"""`python -m pinport`: the same as the `pinport` command."""

from .cli.main import entry

entry()
