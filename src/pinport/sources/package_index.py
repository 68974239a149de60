"""The package index as pip is configured to see it, and the files it lists for a project.

No index is named here: every setting pip uses to decide where packages come from (index-url,
extra-index-url, find-links, no-index, trusted-host, cert, client-cert, timeout, proxy, and
credentials in an index URL or in ~/.netrc) comes from pip's environment variables, then
`pip config list`, then pip's own built-in default. A setting that cannot work is one ConfigError.
"""

from __future__ import annotations

import ast
import base64
import http.client
import json
import netrc
import os
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from html.parser import HTMLParser
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from .. import __version__
from ..errors import ConfigError, NetworkUnavailable, SourceNotFound

JSON_SIMPLE = "application/vnd.pypi.simple.v1+json"  # PEP 691
_ACCEPT = f"{JSON_SIMPLE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
_PIP_TIMEOUT = 15.0  # pip's own default when nothing is configured

# pip setting -> the environment variables pip reads for it, strongest first
_ENVIRONMENT = {
    "index-url": ("PIP_INDEX_URL",),
    "extra-index-url": ("PIP_EXTRA_INDEX_URL",),
    "cert": ("PIP_CERT",),
    "timeout": ("PIP_TIMEOUT", "PIP_DEFAULT_TIMEOUT"),
    "proxy": ("PIP_PROXY",),
    "find-links": ("PIP_FIND_LINKS",),
    "no-index": ("PIP_NO_INDEX",),
    "trusted-host": ("PIP_TRUSTED_HOST",),
    "client-cert": ("PIP_CLIENT_CERT",),
}
_YES, _NO = {"1", "y", "yes", "t", "true", "on"}, {"0", "n", "no", "f", "false", "off", ""}  # pip's strtobool
_ALIASES = {"timeout": ("timeout", "default-timeout")}
_SECTIONS = ("download", "install", "global")  # pip download reads its own section over global

# what failing to reach an index raises: DNS, refused, reset, TLS, timeout, truncated body
NETWORK_ERRORS = (OSError, http.client.HTTPException)


@dataclass(frozen=True)
class IndexConfig:
    """Where to look and how to connect, as pip would."""

    urls: tuple[str, ...]
    cert: str = ""
    timeout: float = _PIP_TIMEOUT
    proxy: str = ""
    find_links: tuple[str, ...] = ()  # directories, files or pages of links to release files
    trusted_hosts: tuple[str, ...] = ()  # "host" or "host:port": TLS not verified, as pip does
    client_cert: str = ""  # PEM with the client's key and certificate

    def _context(self, verify: bool) -> ssl.SSLContext:
        try:
            if verify:
                context = ssl.create_default_context(
                    cafile=self.cert if self.cert and not Path(self.cert).is_dir() else None,
                    capath=self.cert if self.cert and Path(self.cert).is_dir() else None,
                )
            else:
                context = ssl._create_unverified_context()  # noqa: S323 (pip's trusted-host)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"pip's cert setting {self.cert!r} is not usable: {exc}") from None
        if self.client_cert:
            try:
                context.load_cert_chain(self.client_cert)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(f"pip's client-cert setting {self.client_cert!r} is not usable: "
                                  f"{getattr(exc, 'strerror', None) or exc}") from None
        return context

    def _build(self, verify: bool) -> urllib.request.OpenerDirector:
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=self._context(verify))]
        if self.proxy:
            handlers.append(urllib.request.ProxyHandler({"http": self.proxy, "https": self.proxy}))
        return urllib.request.build_opener(*handlers)

    @cached_property
    def _opener(self) -> urllib.request.OpenerDirector:
        return self._build(verify=True)

    @cached_property
    def _trusted_opener(self) -> urllib.request.OpenerDirector:
        return self._build(verify=False)

    def is_trusted(self, url: str) -> bool:
        parts = urlsplit(url)
        host = parts.hostname or ""
        return any(entry in (host, f"{host}:{parts.port}") for entry in self.trusted_hosts)

    def open(self, url: str, accept: str = "*/*") -> IO[bytes]:
        """Open url with pip's certificates, proxy, timeout and credentials; network errors propagate."""
        url, authorization = _credentials(url)
        request = urllib.request.Request(
            url, headers={"Accept": accept, "User-Agent": f"pinport/{__version__}"}
        )
        if authorization:  # not sent on along a redirect to another host
            request.add_unredirected_header("Authorization", authorization)
        opener = self._trusted_opener if self.is_trusted(url) else self._opener
        return opener.open(request, timeout=self.timeout)


def _credentials(url: str) -> tuple[str, str]:
    """(url without user:password@, a Basic Authorization value or ""), from the URL or ~/.netrc as pip does."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return url, ""
    if parts.username is not None:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        user, password = unquote(parts.username), unquote(parts.password or "")
        return parts._replace(netloc=netloc).geturl(), _basic(user, password)
    found = _netrc_login(parts.hostname or "")
    return url, _basic(*found) if found else ""


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


@cache
def _netrc() -> netrc.netrc | None:
    path = os.environ.get("NETRC") or str(Path.home() / ".netrc")
    if not Path(path).is_file():
        return None
    try:
        return netrc.netrc(path)
    except (netrc.NetrcParseError, OSError) as exc:
        raise ConfigError(f"{path}: not a usable netrc file ({getattr(exc, 'msg', None) or exc})") from None


def _netrc_login(host: str) -> tuple[str, str] | None:
    found = _netrc()
    entry = found.authenticators(host) if found is not None and host else None
    return (entry[0] or "", entry[2] or "") if entry else None


@dataclass(frozen=True)
class IndexFile:
    """One release file the index lists."""

    filename: str
    url: str
    version: Version
    kind: str  # "wheel" or "sdist"
    sha256: str | None = None
    yanked: bool = False
    tags: frozenset[Tag] = field(default_factory=frozenset)  # wheels only


@dataclass(frozen=True)
class Listing:
    """The files every reachable index lists for a project, and the indexes that failed."""

    files: tuple[IndexFile, ...]
    failures: tuple[str, ...]


def pip_environment() -> dict[str, str]:
    """pip's settings from its environment variables: the only environment read for the index."""
    out: dict[str, str] = {}
    for key, names in _ENVIRONMENT.items():
        for name in names:
            if os.environ.get(name):
                out[key] = os.environ[name]
                break
    return out


def parse_pip_config_list(text: str) -> dict[str, str]:
    """`section.key='value'` lines of `pip config list`; pip's `:env:` echo lines are dropped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if not sep or key.startswith(":env:"):
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        out[key.strip()] = str(value)
    return out


def resolve_settings(env: Mapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """The effective pip setting per key: environment, then download/install/global sections."""
    out = dict(env)
    for key in _ENVIRONMENT:
        if key in out:
            continue
        for section in _SECTIONS:
            found = next(
                (
                    values[f"{section}.{k}"]
                    for k in _ALIASES.get(key, (key,))
                    if f"{section}.{k}" in values
                ),
                None,
            )
            if found is not None:
                out[key] = found
                break
    return out


def pip_default_index() -> str:
    """pip's built-in index URL, asked of pip itself so that none is written here."""
    try:
        # imported late: pip is optional, and these are its internals
        from pip._internal.models.index import PyPI

        return str(PyPI.simple_url)
    except (ImportError, AttributeError):
        raise ConfigError(
            "no package index configured and pip is not available; set PIP_INDEX_URL"
        ) from None


@cache
def pip_settings() -> dict[str, str]:
    """pip's effective index settings for this interpreter (asked once per process)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        listed = done.stdout if done.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        listed = ""
    return resolve_settings(pip_environment(), parse_pip_config_list(listed))


def _usable(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme == "file":
        return Path(url2pathname(parts.path)).is_dir()  # configured local mirrors may be gone
    return parts.scheme in ("http", "https")


def _yes(settings: Mapping[str, str], key: str) -> bool:
    value = settings.get(key, "").strip().lower()
    if value not in _YES | _NO:
        raise ConfigError(f"pip's {key} setting {settings[key]!r} is not a yes/no value")
    return value in _YES


def index_config(indexes: Sequence[str] | None = None) -> IndexConfig:
    """The indexes to ask (given ones, else pip's), with pip's find-links, certificates, trusted
    hosts, timeout and proxy; `no-index` leaves only the find-links."""
    settings = pip_settings()
    find_links = tuple(settings.get("find-links", "").split())
    if indexes is None:
        if _yes(settings, "no-index"):
            indexes = []
            if not find_links:
                raise ConfigError("pip is set to no-index and has no find-links: nowhere to look for packages")
        else:
            main = settings.get("index-url") or pip_default_index()
            indexes = [main, *settings.get("extra-index-url", "").split()]
    try:
        timeout = float(settings.get("timeout", _PIP_TIMEOUT))
    except ValueError:
        raise ConfigError(
            f"pip's timeout setting {settings['timeout']!r} is not a number"
        ) from None
    return IndexConfig(
        urls=tuple(dict.fromkeys(u for u in indexes if _usable(u))),
        cert=settings.get("cert", ""),
        timeout=timeout,
        proxy=settings.get("proxy", ""),
        find_links=find_links,
        trusted_hosts=tuple(settings.get("trusted-host", "").split()),
        client_cert=settings.get("client-cert", ""),
    )


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.append(dict(attrs))


def _to_file(
    project: str, filename: str, url: str, sha256: str | None, yanked: bool
) -> IndexFile | None:
    try:
        if filename.endswith(".whl"):
            name, version, _, tags = parse_wheel_filename(filename)
            kind = "wheel"
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            tags, kind = frozenset(), "sdist"
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    if name != project:
        return None
    return IndexFile(filename, url, version, kind, sha256 or None, yanked, frozenset(tags))


def parse_json_page(project: str, body: bytes, base: str) -> list[IndexFile]:
    """Files of a PEP 691 JSON project page."""
    files = []
    for item in json.loads(body).get("files", []):
        url = urljoin(base, item.get("url", ""))
        sha = (item.get("hashes") or {}).get("sha256")
        found = _to_file(project, item.get("filename", ""), url, sha, bool(item.get("yanked")))
        files.extend([found] if found else [])
    return files


def parse_html_page(project: str, body: bytes, base: str) -> list[IndexFile]:
    """Files of a PEP 503 HTML project page (hash in the URL fragment)."""
    parser = _Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    files = []
    for attrs in parser.links:
        url = urljoin(base, attrs.get("href") or "")
        parts = urlsplit(url)
        sha = (
            parts.fragment.removeprefix("sha256=") if parts.fragment.startswith("sha256=") else None
        )
        filename = unquote(parts.path.rsplit("/", 1)[-1])
        found = _to_file(project, filename, url.split("#", 1)[0], sha, "data-yanked" in attrs)
        files.extend([found] if found else [])
    return files


def _project_page(index: str, project: str, config: IndexConfig) -> list[IndexFile] | None:
    """The files one index lists for project; None when it does not have the project."""
    url = f"{index.rstrip('/')}/{project}/"
    if urlsplit(url).scheme == "file":
        page = Path(url2pathname(urlsplit(url).path)) / "index.html"
        return (
            parse_html_page(project, page.read_bytes(), page.as_uri()) if page.is_file() else None
        )
    try:
        with config.open(url, _ACCEPT) as response:
            body, final = response.read(), response.geturl()
            content_type = response.headers.get_content_type()
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        raise
    if content_type == JSON_SIMPLE:
        return parse_json_page(project, body, final)
    return parse_html_page(project, body, final)


def _find_links_files(location: str, project: str, config: IndexConfig) -> list[IndexFile]:
    """Release files of `project` at one find-links location: a directory, an HTML file or page."""
    parts = urlsplit(location)
    if parts.scheme in ("http", "https"):
        with config.open(location, "text/html") as response:
            return parse_html_page(project, response.read(), response.geturl())
    path = Path(url2pathname(parts.path)) if parts.scheme == "file" else Path(location).expanduser()
    if path.is_dir():
        found = (_to_file(project, p.name, p.resolve().as_uri(), None, False) for p in sorted(path.iterdir()))
        return [f for f in found if f is not None]
    if path.is_file():
        return parse_html_page(project, path.read_bytes(), path.resolve().as_uri())
    return []


def describe_failure(url: str, exc: BaseException) -> str:
    """One line saying which index failed and why."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(exc, urllib.error.HTTPError):
        reason = f"HTTP {exc.code}"
    text = " ".join(str(reason).split()) or type(exc).__name__
    return f"cannot reach the package index {urlsplit(url).netloc or url}: {text}"


def list_project(dist: str, config: IndexConfig) -> Listing:
    """Every file the configured indexes list for dist; raises when no index lists it at all."""
    project = canonicalize_name(dist)
    files: list[IndexFile] = []
    failures: list[str] = []
    listed = False
    # an index lists the project when it has a page for it; a find-links location when it has files
    asked = [(index, lambda i=index: _project_page(i, project, config)) for index in config.urls]
    asked += [(location, lambda loc=location: _find_links_files(loc, project, config) or None)
              for location in config.find_links]
    for location, ask in asked:
        try:
            found = ask()
        except NETWORK_ERRORS as exc:
            failures.append(describe_failure(location, exc))
            continue
        except ValueError as exc:  # a JSON page that is not JSON
            failures.append(f"the package index {urlsplit(location).netloc or location} sent a bad page: {exc}")
            continue
        listed = listed or found is not None
        files.extend(found or [])
    if not listed and failures:
        raise NetworkUnavailable(failures[0])
    if not listed:
        where = ", ".join((*config.urls, *config.find_links))
        raise SourceNotFound(f"{dist} is not on the package index ({where})")
    return Listing(tuple(files), tuple(failures))
