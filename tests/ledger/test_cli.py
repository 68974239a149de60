from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pinport.cli.ledger import ledger_command

from .conftest import Synthetic
from .gitrepo import ScratchRepo, pyproject

PROBES_TOML = """
[[probe]]
label = "kv.shape"
file = "plugin/attn.py"
regex = 'return (\\(.*\\))'
"""


def run(*args: str):
    return CliRunner().invoke(ledger_command, list(args), catch_exceptions=False)


@pytest.fixture
def probes_file(tmp_path: Path) -> Path:
    path = tmp_path / "probes.toml"
    path.write_text(PROBES_TOML)
    return path


def stalled_repo(tmp_path: Path) -> ScratchRepo:
    repo = ScratchRepo(tmp_path / "stalled")
    for pin, shape in [("0.9.2", "(a)"), ("0.10.1", "(b)"), ("0.11.0", "(c)"), ("0.18.0", "(c)")]:
        repo.commit(
            f"vllm {pin}",
            {
                "pyproject.toml": pyproject(pin, embedding="0.8.0"),
                "plugin/attn.py": f"def f():\n    return {shape}\n",
            },
        )
    return repo


def test_text_and_exit_0(synthetic: Synthetic, probes_file: Path) -> None:
    result = run(str(synthetic.root), "--probes", str(probes_file))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Evolution ledger: 7 pins (0.8.1 → 0.9.0.1 → 0.9.2 → 0.10.1 → 0.10.1")
    assert "origin/rebase/vllm_v0.12" in result.output


def test_flag_exits_1_and_json(tmp_path: Path, probes_file: Path) -> None:
    repo = stalled_repo(tmp_path)
    result = run(str(repo.root), "--probes", str(probes_file), "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["pins"] == [
        "0.9.2",
        "0.10.1",
        "0.11.0",
        "0.18.0",
    ]  # pin-sources from [tool.pinport]
    assert [f["kind"] for f in data["flags"]] == ["STALLED"]


def test_write_markdown(tmp_path: Path, synthetic: Synthetic, probes_file: Path) -> None:
    target = tmp_path / "EVOLUTION.md"
    result = run(
        str(synthetic.root),
        "--probes",
        str(probes_file),
        "--write",
        str(target),
        "--format",
        "markdown",
    )
    assert result.exit_code == 0
    assert target.read_text() == result.output
    assert target.read_text().startswith("# Evolution ledger")


def test_branches_and_no_worktree(synthetic: Synthetic, probes_file: Path) -> None:
    result = run(
        str(synthetic.root),
        "--probes",
        str(probes_file),
        "--branches",
        "feature/*",
        "--no-worktree",
        "--format",
        "json",
    )
    assert json.loads(result.output)["pins"] == ["0.8.1", "0.9.0.1", "0.10.1", "0.13.0"]
    kinds = {c["kind"] for c in json.loads(result.output)["columns"]}
    assert "worktree" not in kinds


def test_probes_file_from_settings(synthetic: Synthetic) -> None:
    synthetic.repo.write(
        {
            "ledger.toml": PROBES_TOML,
            "pyproject.toml": pyproject("0.10.1", embedding="0.8.0")
            + 'probes-file = "ledger.toml"\n',
        }
    )
    result = run(str(synthetic.root), "--format", "json")
    assert [r["label"] for r in json.loads(result.output)["rows"]] == ["kv.shape"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("plain dir", "not a git repository"),
        ("missing", "no such directory"),
        ("bad regex", "probe 'bad': invalid regex"),
        ("no probes file", "no such probes file"),
    ],
)
def test_errors_are_one_line_exit_2(
    tmp_path: Path, synthetic: Synthetic, setup: str, message: str
) -> None:
    repo, probes = str(synthetic.root), str(tmp_path / "p.toml")
    (tmp_path / "p.toml").write_text(PROBES_TOML)
    if setup == "plain dir":
        repo = str(tmp_path / "plain")
        Path(repo).mkdir()
    elif setup == "missing":
        repo = str(tmp_path / "missing")
    elif setup == "bad regex":
        (tmp_path / "p.toml").write_text('[[probe]]\nlabel = "bad"\nfile = "f"\nregex = "("\n')
    else:
        probes = str(tmp_path / "nope.toml")
    result = CliRunner().invoke(ledger_command, [repo, "--probes", probes])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("pinport: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_exit_code_through_the_main_entry_point(tmp_path: Path, probes_file: Path) -> None:
    """`pinport ledger` via cli.main: a raised flag is exit 1 there too, not only under CliRunner."""
    from pinport.cli.main import main

    repo = stalled_repo(tmp_path)
    assert main(["ledger", str(repo.root), "--probes", str(probes_file), "--no-auto"]) == 1
