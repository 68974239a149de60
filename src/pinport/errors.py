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
