from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinport.errors import ConfigError, SourceNotFound
from pinport.ledger import Probe, default_probes, load_probes, parse_probes
from pinport.ledger.probes import normalize

SOURCE = """\
def get_kv_cache_shape(
    num_blocks: int,
    head_size: int,
) -> tuple[int, ...]:
    return (2, num_blocks,
            head_size)

key_cache, value_cache = kv_cache.transpose(1, 2).split(
    self.head_size, dim=-1
)
k, v = kv_cache.unbind(0)
k, v = kv_cache.unbind(1)
"""


@pytest.mark.parametrize(
    ("probe", "expected"),
    [
        (Probe("a", "f.py", r"k, v = (kv_cache\.\w+\(\d\))"), "kv_cache.unbind(0)"),
        (
            Probe("all", "f.py", r"k, v = (kv_cache\.\w+\(\d\))", all_matches=True),
            "kv_cache.unbind(0) | kv_cache.unbind(1)",
        ),
        (Probe("no group", "f.py", r"unbind\(\d\)"), "unbind(0)"),
        (
            Probe("group 0", "f.py", r"k, v = (kv_cache)\.unbind\(\d\)", group=0),
            "k, v = kv_cache.unbind(0)",
        ),
        (Probe("named", "f.py", r"k, v = kv_cache\.(?P<call>\w+)", group="call"), "unbind"),
        (Probe("one line", "f.py", r"def get_kv_cache_shape\((.*)\)"), None),
        (
            Probe("lines", "f.py", r"def get_kv_cache_shape\((.*?)\)", multiline=True),
            "num_blocks: int, head_size: int",
        ),
        (Probe("anchors", "f.py", r"^\s+return (.*?)$", multiline=True), "(2, num_blocks"),
        (
            Probe("normalised", "f.py", r"return (\(.*?\))", multiline=True),
            "(2, num_blocks, head_size)",
        ),
        (
            Probe("call", "f.py", r"key_cache, value_cache = (kv_cache(?:\.\w+\([^()]*\))+)"),
            "kv_cache.transpose(1, 2).split(self.head_size, dim=-1)",
        ),
        (Probe("none", "f.py", r"nothing here"), None),
    ],
)
def test_evaluate(probe: Probe, expected: str | None) -> None:
    assert probe.evaluate(SOURCE) == expected


def test_strip_comments() -> None:
    source = "def f(\n    a,  # the first (one)\n    b=1,  # and b\n):\n"
    probe = Probe("p", "f.py", r"def f(\(.*?\)):", multiline=True, strip_comments=True)
    assert probe.evaluate(source) == "(a, b=1)"
    assert parse_probes(
        '[[probe]]\nlabel = "p"\nfile = "f"\nregex = "x"\nstrip-comments = true\n',
        "t",
        json_format=False,
    )[0].strip_comments


def test_evaluate_absent_file() -> None:
    assert Probe("a", "f.py", "x").evaluate(None) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a,\n    b,\n)", "a, b)"),
        ("( x )", "(x)"),
        ("[\n  1,\n  2,\n]", "[1, 2]"),
        ("self, x,", "self, x"),
        ("  plain  ", "plain"),
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"regex": "("}, "probe 'p': invalid regex"),
        ({"regex": ""}, "probe 'p': missing 'regex'"),
        ({"file": ""}, "probe 'p': missing 'file'"),
        ({"group": 2}, "probe 'p': no capture group 2"),
        ({"group": "name"}, "probe 'p': no capture group 'name'"),
        ({"group": True}, "'group' must be a number or a name"),
        ({"host_regex": "x"}, "'host-regex' needs 'host-file'"),
        ({"host_file": "h.py", "host_regex": "[a"}, "probe 'p': invalid host-regex"),
    ],
)
def test_invalid_probe_names_the_probe(kwargs: dict, message: str) -> None:
    values = {"label": "p", "file": "f.py", "regex": "(x)", **kwargs}
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        Probe(**values)


TOML = """
[[probe]]
label = "shape"
file = "pkg/attn.py"
regex = 'return (\\(.*\\))'
multiline = true
all = true
group = 1
host-file = "vllm/attn.py"
host-regex = 'return (\\(.*\\))'
"""


def test_load_toml_and_json_agree(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(TOML)
    entry = {
        "label": "shape",
        "file": "pkg/attn.py",
        "regex": r"return (\(.*\))",
        "multiline": True,
        "all": True,
        "group": 1,
        "host_file": "vllm/attn.py",
        "host_regex": r"return (\(.*\))",
    }
    (tmp_path / "p.json").write_text(json.dumps({"probe": [entry]}))
    (tmp_path / "list.json").write_text(json.dumps([entry]))
    from_toml = load_probes(tmp_path / "p.toml")
    assert from_toml == load_probes(tmp_path / "p.json") == load_probes(tmp_path / "list.json")
    (probe,) = from_toml
    assert (probe.multiline, probe.all_matches, probe.host_file, probe.section) == (
        True,
        True,
        "vllm/attn.py",
        "probes",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[probe]]\nlabel = "a"\nfile = "f"\nregex = "("\n', "probe 'a': invalid regex"),
        (
            '[[probe]]\nlabel = "a"\nfile = "f"\nregex = "x"\ncolour = 1\n',
            "probe 'a': unknown key 'colour'",
        ),
        ('[[probe]]\nlabel = "a"\nregex = "x"\n', "probe 'a': missing 'file'"),
        (
            '[[probe]]\nlabel = "a"\nfile = "f"\nregex = "x"\nmultiline = "yes"\n',
            "probe 'a': 'multiline' must be true or false",
        ),
        ('[[probe]]\nlabel = "a"\nfile = 3\nregex = "x"\n', "probe 'a': 'file' must be a string"),
        ('[[probe]]\nfile = "f"\nregex = "("\n', "a probe needs a non-empty 'label'"),
        (
            '[[probe]]\nlabel = "a"\nfile = "f"\nregex = "x"\n[[probe]]\nlabel = "a"\nfile = "g"\nregex = "y"\n',
            "probe 'a' is defined twice",
        ),
        ("probe = 3\n", "expected a 'probe' list"),
        ("[[probe]\n", "not valid TOML"),
        ("probe = [3]\n", "probe #1 is not a table"),
    ],
)
def test_bad_probes_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")) as info:
        load_probes(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_bad_json_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_probes(tmp_path / "bad.json")
    with pytest.raises(SourceNotFound, match="no such probes file"):
        load_probes(tmp_path / "missing.toml")


def test_parse_probes_keeps_order() -> None:
    text = "".join(f'[[probe]]\nlabel = "{x}"\nfile = "f"\nregex = "x"\n' for x in "cab")
    assert [p.label for p in parse_probes(text, "t", json_format=False)] == ["c", "a", "b"]


def test_default_set_for_arctic_inference() -> None:
    probes = default_probes("arctic_inference")
    assert 10 <= len(probes) <= 25
    labels = {p.label for p in probes}
    assert {"fca.kv_cache_shape", "fca.kv_split", "swiftkv.kv_split"} <= labels
    assert all(p.file.startswith("arctic_inference/") for p in probes)
    assert default_probes("") == () == default_probes("no_such_profile")


def test_digest_probe_hashes_the_normalised_match() -> None:
    probe = Probe("fork", "f.py", r"\A(.*)\Z", multiline=True, digest=True, strip_comments=True)
    value = probe.evaluate("def f():\n    return 1\n")
    assert value is not None and value.startswith("#") and len(value) == 13
    assert probe.evaluate("def f():   # reformatted, commented\n    return 1\n") == value
    assert probe.evaluate("def f():\n    return 2\n") != value


def test_the_procedures_own_probe_file_as_it_is(tmp_path: Path) -> None:
    # evolution_probes.json: {"probes": [{"label", "file", "regex", "dotall", "all"}]}
    (tmp_path / "evolution_probes.json").write_text(json.dumps({"probes": [
        {"label": "shape", "file": "a.py", "regex": r"return (\(.*?\))", "dotall": True, "all": False},
        {"label": "aliases", "file": "a.py", "regex": r"(_orig_\w+) =", "dotall": False, "all": True},
    ]}))
    shape, aliases = load_probes(tmp_path / "evolution_probes.json")
    assert (shape.multiline, shape.all_matches, aliases.multiline, aliases.all_matches) == (True, False, False, True)
    text = "_orig_a = 1\n_orig_b = 2\ndef f():\n    return (a,\n            b)\n"
    assert shape.evaluate(text) == "(a, b)" and aliases.evaluate(text) == "_orig_a | _orig_b"
