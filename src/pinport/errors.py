"""The errors pinport raises below the CLI; each carries one line of user-facing text."""


class PinportError(Exception):
    """Base of every error the CLI turns into `pinport: error: <message>` and exit 2."""


class SourceNotFound(PinportError):
    """A path, git ref or installed package that does not exist."""


class VersionNotFound(PinportError):
    """A package version the registry does not have."""


class NetworkUnavailable(PinportError):
    """The registry could not be reached."""


class ConfigError(PinportError):
    """Invalid settings in `[tool.pinport]`, a profile, a probes file or on the command line."""


class CacheError(PinportError):
    """The user cache cannot be written (read-only, full disk)."""


def note_context(exc: BaseException, what: str) -> None:
    """Record on an unexpected exception what pinport was doing (innermost first), for its one-line report."""
    if not isinstance(exc, PinportError) and what not in getattr(exc, "__notes__", ()):
        exc.add_note(what)
