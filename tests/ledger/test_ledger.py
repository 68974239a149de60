from __future__ import annotations

from pathlib import Path

import pytest

import pinport.ledger
from pinport.errors import ConfigError, SourceNotFound
from pinport.ledger import AUTO, Cell, Column, ColumnKind, FlagKind, Probe, build_ledger

from .conftest import PROBES, SETTINGS, Synthetic, attn, runner
from .gitrepo import ScratchRepo, pyproject


def test_all() -> None:
    assert len(set(pinport.ledger.__all__)) == len(pinport.ledger.__all__)
    assert all(hasattr(pinport.ledger, name) for name in pinport.ledger.__all__)


def test_cells_per_column(synthetic: Synthetic) -> None:
    ledger = build_ledger(synthetic.root, SETTINGS, PROBES)
    # 0.10.1 twice: committed (the fix branch), then the edited work tree
    assert ledger.pins == ("0.8.1", "0.9.0.1", "0.9.2", "0.10.1", "0.10.1", "0.11.0", "0.12.0")
    shape, params = ledger.rows
    assert shape.values == ("(2, n)", "(n, 2)", "(n, 2)", "(n, 2, h)", "(n, 2, h, d)", "(n, h, 2)",
                            "(n, h, 2)")
    assert params.values == ("x", "x, y", "x, y", "x, y, z", "x, y, z", "x, y, z, w", "x, y, z, w")
    # the history column of 0.8.1 is the commit that introduced the pin, before "feature work"


def test_no_match_and_absent_file_are_told_apart(synthetic: Synthetic) -> None:
    synthetic.repo.commit("new module", {"plugin/new.py": "X = 1\n"})
    probes = (Probe("new", "plugin/new.py", r"X = (\d)"), Probe("nothing", "plugin/attn.py", "zzz"))
    new, nothing = build_ledger(synthetic.root, SETTINGS, probes).rows
    assert new.cells[0] == Cell(None, False) and new.cells[3] == Cell("1", True)
    assert set(nothing.cells) == {Cell(None, True)}


def test_probe_file_in_no_column_is_an_error_naming_it(synthetic: Synthetic) -> None:
    with pytest.raises(ConfigError, match="probe 'typo': file 'plugin/atn.py' exists in no column"):
        build_ledger(synthetic.root, SETTINGS, (Probe("typo", "plugin/atn.py", "x"),))


def test_no_pin_anywhere(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "p")
    repo.commit("no pin", {"pyproject.toml": '[project]\nname = "x"\n'})
    with pytest.raises(
        SourceNotFound, match="no vllm pin in history, rebase branches or work tree"
    ):
        build_ledger(repo.root, SETTINGS, PROBES)


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(SourceNotFound, match="not a git repository"):
        build_ledger(tmp_path, SETTINGS, PROBES)


def bumps(tmp_path: Path, shapes: list[str | None]) -> Path:
    """One commit per pin; None deletes the probed line."""
    repo = ScratchRepo(tmp_path / "bumps")
    for pin, shape in zip(["0.8.1", "0.9.2", "0.10.1", "0.11.0", "0.18.0"], shapes, strict=False):
        repo.commit(
            f"vllm {pin}",
            {
                "pyproject.toml": pyproject(pin),
                "plugin/attn.py": attn(shape) if shape else "# gone\n",
                "plugin/runner.py": runner("x"),
            },
        )
    return repo.root


@pytest.mark.parametrize(
    ("shapes", "expected"),
    [
        (["(a)", "(b)", "(c)", "(c)"], [FlagKind.STALLED]),
        (["(a)", "(b)", "(c)", "(d)"], []),
        (["(a)", "(b)", "(c)", None], [FlagKind.VANISHED]),
        (["(a)", "(b)", "(a)"], [FlagKind.REVERTED]),
        (["(a)", "(a)", "(b)"], []),
    ],
)
def test_flags_on_a_real_repository(tmp_path: Path, shapes: list, expected: list) -> None:
    ledger = build_ledger(bumps(tmp_path, shapes), SETTINGS, PROBES[:1])
    assert [f.kind for f in ledger.flags] == expected
    assert all(f.probe == "kv.shape" for f in ledger.flags)


def test_auto_probes_seam(synthetic: Synthetic) -> None:
    seen: list[Column] = []

    def derive(column: Column, read):
        seen.append(column)
        assert "def forward" in read("plugin/runner.py")
        return [Probe("Runner.forward params", "plugin/runner.py", r"def forward\(self, ([^)]*)\)")]

    ledger = build_ledger(synthetic.root, SETTINGS, PROBES, auto_probes=derive)
    assert [c.pin for c in seen] == ["0.12.0"]  # derived at the newest column only
    assert [(r.probe.label, r.probe.section) for r in ledger.rows] == [
        ("kv.shape", "probes"),
        ("runner.params", "probes"),
        ("Runner.forward params", AUTO),
    ]
    assert ledger.rows[2].values == ledger.rows[1].values


def test_auto_probe_clashing_with_a_manual_label(synthetic: Synthetic) -> None:
    with pytest.raises(ConfigError, match="probe 'kv.shape' is defined twice"):
        build_ledger(synthetic.root, SETTINGS, PROBES, auto_probes=lambda c, r: [PROBES[0]])


def test_host_cross_check_seam(tmp_path: Path) -> None:
    root = bumps(tmp_path, ["(a)", "(b)", "(b)"])
    upstream = {"0.9.2": "SHAPE = (2, n)\n", "0.10.1": "SHAPE = (n, 2)\n"}
    calls = []

    def host(version: str, path: str) -> str | None:
        calls.append((version, path))
        return upstream.get(version)

    probe = Probe(
        "kv.shape",
        "plugin/attn.py",
        r"return (\(.*\))",
        host_file="vllm/attn.py",
        host_regex=r"SHAPE = (\(.*\))",
    )
    ledger = build_ledger(root, SETTINGS, (probe, PROBES[1]), host=host)
    assert calls == [("0.9.2", "vllm/attn.py"), ("0.10.1", "vllm/attn.py")]
    (flag,) = ledger.flags
    assert (flag.kind, flag.columns, flag.values) == (
        FlagKind.HOST_CHANGED,
        ("0.9.2", "0.10.1"),
        ("(2, n)", "(n, 2)"),
    )
    assert build_ledger(root, SETTINGS, (probe,)).flags == ()  # no host reader: no cross-check


def test_worktree_can_be_left_out(synthetic: Synthetic) -> None:
    ledger = build_ledger(synthetic.root, SETTINGS, PROBES, include_worktree=False)
    assert ColumnKind.WORKTREE not in {c.kind for c in ledger.columns}
    assert ledger.rows[0].values[3] == "(n, 2, h)"


def test_branch_pattern_argument(synthetic: Synthetic) -> None:
    ledger = build_ledger(synthetic.root, SETTINGS, PROBES, branch_pattern="feature/*")
    assert ledger.pins == ("0.8.1", "0.9.0.1", "0.10.1", "0.10.1", "0.13.0")


def test_planned_pin_is_the_work_tree_as_last_column(synthetic: Synthetic) -> None:
    ledger = build_ledger(synthetic.root, SETTINGS, PROBES, planned="0.13.0")
    last = ledger.columns[-1]
    assert (last.pin, last.kind, last.planned) == ("0.13.0", ColumnKind.WORKTREE, True)
    shape, params = ledger.rows
    assert (shape.values[-1], params.values[-1]) == ("(n, 2, h, d)", "x, y, z")  # what is on disk
    # a pin that is already a column is not planned again
    again = build_ledger(synthetic.root, SETTINGS, PROBES, planned="0.12.0")
    assert [c.pin for c in again.columns].count("0.12.0") == 1 and not any(c.planned for c in again.columns)
