"""What patch discovery finds in the plugin: host imports, patch targets, patches and host uses."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..findings import Location
from ..model.summary import FunctionInfo


class Guard(StrEnum):
    """What protects a plugin statement from failing at import time on a host that lacks a name."""

    NONE = ""
    TRY = "try"  # inside `try:` with an ImportError/AttributeError/Exception handler
    FALLBACK = "try-fallback"  # the same, each such handler carrying on without raising (a probe)
    TYPE_CHECKING = "type-checking"  # only seen by type checkers
    VERSION = "version-guard"  # under `if vllm_version_is(...)` or a comparison of the host version
    FUNCTION = "function"  # a function-local import: fails when the function runs, not at import


class PatchKind(StrEnum):
    MEMBER = "patch member"  # defined in a patch class body: copied onto the target
    OVERRIDE = "subclass override"  # a method of a plugin subclass of a host class
    ASSIGNMENT = "assignment"  # `Target.attr = fn` or `setattr(Target, "attr", fn)`
    ALIAS = "alias"  # `_orig_x = Target.x`: keeps the upstream implementation


@dataclass(frozen=True)
class HostImport:
    site: Location
    path: str  # absolute dotted path imported ("vllm.a.b" for a module, "vllm.a.b.X" for a name)
    is_module_import: bool  # `import vllm.a.b` (the module must exist) vs `from vllm.a import b`
    guard: Guard
    # in an `except ImportError:` handler: the host paths its `try:` imports (the handler runs only when one
    # of them fails, so on a host where all resolve it is another version's fallback)
    instead: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatchTarget:
    """A plugin class that patches or subclasses a host class (or, for a patch, a module)."""

    site: Location  # the plugin class statement
    plugin_class: str  # the plugin class's qualified name in its module
    plugin_module: str
    target: str  # host dotted path of the target, as resolved from the plugin's imports
    is_patch: bool  # True: Helper[Target] patch class; False: an ordinary subclass
    guard: Guard


@dataclass(frozen=True)
class Patch:
    """One host member the plugin replaces, adds, or keeps the original of."""

    kind: PatchKind
    site: Location
    owner: str  # host dotted path of the patched class or module
    name: str  # member name on the owner
    function: FunctionInfo | None  # the plugin's replacement, when it is a function
    plugin_module: str
    via: str = ""  # the plugin class through which it is applied (qualified name)
    alias_of: str = ""  # for ALIAS: the host member path kept
    local_name: str = ""  # for ALIAS: the plugin's name for it ("_orig_init")
    wrapper: str = ""  # staticmethod/classmethod wrapping on assignment
    guard: Guard = Guard.NONE
    by_string: bool = False  # the target is spelled as a string (a registry): nothing imports it

    @property
    def target(self) -> str:
        return f"{self.owner}.{self.name}"


@dataclass(frozen=True)
class HostUse:
    """A read of a host attribute through a name bound to a host module or class (`envs.VLLM_X`)."""

    site: Location
    path: str  # full host dotted path read
    base: str  # the host path of the name it is read from
    guard: Guard


@dataclass(frozen=True)
class Replacement:
    """A plugin class installed in place of a host class: the host builds the plugin's class instead.

    `how` names the mechanism: "register_oot" (CustomOp / PluggableLayer out-of-tree registration,
    `Host.register_oot(Plugin)` or `@Host.register_oot`), possibly through a plugin helper function.
    """

    site: Location
    host_class: str  # host dotted path of the replaced class
    plugin_module: str
    plugin_class: str  # qualified name in plugin_module
    how: str


@dataclass(frozen=True)
class StandIn:
    """A plugin module put into `sys.modules` under a host module's name: importing that name works."""

    site: Location
    host_module: str  # the host dotted name it stands in for
    plugin_module: str  # where the statement is


@dataclass(frozen=True)
class Deletion:
    """`del Host.member`: the class loses its own member (its bases' shows through), and the statement
    raises AttributeError when the class no longer defines the member itself."""

    site: Location
    owner: str  # host dotted path of the class or module
    name: str
    guard: Guard


@dataclass(frozen=True)
class EnvEntry:
    """`envs.environment_variables["VLLM_X"] = ...`: the plugin adds a flag to the host's table."""

    site: Location
    table: str  # host dotted path of the table's module
    name: str


@dataclass(frozen=True)
class ClassPath:
    """A class the host loads by a dotted-path string the plugin gives it (`worker_cls = "pkg.mod.Cls"`,
    `ModelRegistry.register_model(arch, "pkg.mod:Cls")`): it must resolve in the plugin."""

    site: Location
    path: str  # "pkg.mod.Cls" (a "pkg.mod:Cls" string normalised)
    how: str  # the keyword, attribute or call that names it
