"""`pinport rebase --apply --branch` on a synthetic plugin repository, end to end, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinport.cli.main import main
from pinport.rebase import KEEP

from .synthetic import Synthetic, build


@pytest.fixture
def synthetic(tmp_path: Path) -> Synthetic:
    return build(tmp_path)


def _rebase(s: Synthetic, out: Path, *extra: str) -> int:
    return main(["rebase", "--plugin", str(s.root), "--new", "0.4.0", "--old-tree", str(s.old_host),
                 "--new-tree", str(s.new_host), "--out", str(out), "--cache-dir", str(s.root.parent / "cache"),
                 "--no-progress", *extra])


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def test_apply_branch_end_to_end(synthetic: Synthetic, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "docs"
    branches_before = {b: synthetic.repo.git("rev-parse", b) for b in ("main", "rebase/hostlib_v2",
                                                                        "rebase/hostlib_v3")}
    code = _rebase(synthetic, out, "--apply", "--branch")
    printed = capsys.readouterr().out
    assert code == 1, printed  # `gone` was removed upstream: an error no safe fix can resolve

    # base: the validated 0.2.0 branch, over main (older) and the unvalidated 0.3.0 branch
    assert "base: rebase/hostlib_v2 at" in printed and "pin 0.2.0" in printed
    assert "passed over main" in printed and "pin 0.1.0 is older than 0.2.0" in printed
    assert "passed over rebase/hostlib_v3" in printed and "no validation record" in printed

    # the working branch: created at the base, checked out; nothing that existed moved
    repo = synthetic.repo
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD") == "rebase/hostlib_v4"
    assert repo.git("rev-parse", "HEAD") == synthetic.shas["rebase/hostlib_v2"]
    assert {b: repo.git("rev-parse", b) for b in branches_before} == branches_before

    # pins: host pin and torch/protobuf moved with comments kept; the separate extra left alone
    pyproject = (synthetic.root / "pyproject.toml").read_text()
    assert "    'hostlib==0.4.0',  # the pin\n" in pyproject
    assert '    # keep in step with the host\'s torch\n    "torch==2.3.0",\n' in pyproject
    assert '    "protobuf==4.25.0",\n' in pyproject  # inside the host's range: no edit
    assert 'embedding = ["hostlib==0.1.0", "protobuf==3.20.0"]  # its own older host\n' in pyproject
    assert "pyproject.toml:12  add" not in printed
    assert "'hostlib==0.2.0',  # the pin  ->  'hostlib==0.4.0',  # the pin" in printed
    assert '"torch==2.1.0",  ->  "torch==2.3.0",' in printed

    # the safe fixes: moved import split off, added parameter forwarded, dropped parameter removed
    patches = (synthetic.root / "demo_plugin/patches.py").read_text()
    assert patches.startswith("from hostlib.utils import kept  # helpers\nfrom hostlib.helpers import helper\n"
                              "from hostlib.utils import gone\n")
    assert "    def step(self, batch, budget=None):\n        batch = helper(batch)\n" \
           "        return self._orig_step(batch, budget=budget)\n" in patches
    assert "    def load(self, path):\n        return super().load(path)\n" in patches
    assert "demo_plugin/patches.py:1  import `helper` from `hostlib.helpers`" in printed
    assert "from hostlib.utils import helper, kept  # helpers  ->" in printed

    # merges: only the one `port` verified clean is applied; the one that still reads a dropped
    # member (clean as text, failed verification) is left, with why, in the plan
    engine = (synthetic.root / "demo_plugin/engine_patch.py").read_text()
    step = engine.split("    def step", 1)[1]
    assert "            if item is None:  # plugin: skip padding\n" in step
    assert "            value = self.compute(item) + 1\n" in step and "        self.steps += len(batch)\n" in step
    drain = engine.split("    def step", 1)[0]
    assert "        results = []\n" in drain and "results: list" not in drain
    assert "demo_plugin/engine_patch.py:16  clean three-way merge of `EnginePatch.step` (mirror)" in printed
    assert "self.steps += 1  ->  self.steps += len(batch)" in printed
    assert "EnginePatch.drain" not in printed

    # the plan: fixed items ticked, the removed helper still open
    plan = (out / "REBASE_PLAN.md").read_text()
    ticked = [line for line in plan.splitlines() if line.startswith("- [x]")]
    open_ = [line for line in plan.splitlines() if line.startswith("- [ ]") and "`PP" in line]
    assert any("`PP0402`" in line and "safe fix: import `helper` from `hostlib.helpers`" in line for line in ticked)
    assert any("`PP0101`" in line and "budget" in line for line in ticked)
    assert any("`PP020" in line and "strict" in line for line in ticked)
    assert any("`PP0020`" in line for line in ticked) and any("`PP0021`" in line for line in ticked)
    assert [line for line in open_ if "`PP0601`" in line and "`gone`" in line
            and "not a safe fix: `gone` is defined nowhere in NEW" in line]
    assert not [line for line in open_ if "`PP0402`" in line or "`PP0101`" in line]
    assert "- [x] clean three-way merge of `EnginePatch.step` (mirror, demo_plugin/engine_patch.py:16)" in plan
    assert "- [ ] merge of `EnginePatch.drain` (mirror, demo_plugin/engine_patch.py:7) not applied: still PP1202 " \
           "after the merge: the mirror of `hostlib.engine.Engine.drain` uses `self.config`" in plan

    # the runbook maps the changed units to the tests that exercise them, and only those
    runbook = (out / "REBASE_TEST.md").read_text()
    row = next(line for line in runbook.splitlines() if line.startswith("| `demo_plugin/patches.py` `MyRunner.load`"))
    assert "`tests/test_patches.py`" in row and "test_other" not in row
    assert all((out / name).is_file() for name in ("REBASE_REPORT.md", "EVOLUTION.md"))

    # the HTML report beside them: self-contained, every finding and pin, the merge proposals shown
    html = (out / "REBASE_REPORT.html").read_text()
    assert f"HTML report (open it in a browser): {out / 'REBASE_REPORT.html'}" in printed
    assert html.startswith("<!DOCTYPE html>") and "default-src 'none'" in html
    assert "http://" not in html and "https://" not in html and "<link" not in html and " src=" not in html
    for code in ("PP0020", "PP0021", "PP0402", "PP0601", "PP0101", "PP1202"):
        assert f"data-code='{code}'" in html, code
    assert html.count("<article class='finding'") == len([line for line in plan.splitlines() if "`PP" in line
                                                           and line.startswith("- [") and "merge of" not in line])
    assert "EnginePatch.step" in html and "self.steps += len(batch)" in html

    # a second run changes nothing: the tree and the documents are byte-identical
    tree, docs = _snapshot(synthetic.root), _snapshot(out)
    assert _rebase(synthetic, out, "--apply", "--branch") == 2  # the first run's edits are not committed
    assert "uncommitted changes (M " in capsys.readouterr().err
    assert _rebase(synthetic, out, "--apply", "--branch", "--allow-dirty") == 1
    again = capsys.readouterr().out
    assert "applied" not in again and "on rebase/hostlib_v4 already" in again
    assert _snapshot(synthetic.root) == tree
    assert _snapshot(out) == docs


def test_plan_only_keeps_what_a_maintainer_wrote(synthetic: Synthetic, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "docs"
    before = _snapshot(synthetic.root)
    assert _rebase(synthetic, out) == 1
    printed = capsys.readouterr().out
    assert "planned (run with --apply): 2 pin edits, 3 safe fixes, 1 clean merges" in printed
    assert _snapshot(synthetic.root) == before  # plan only: the checkout is untouched
    plan = out / "REBASE_PLAN.md"
    text = plan.read_text()
    assert text.count(KEEP) == 1
    plan.write_text(text + "\nGPU box booked for Tuesday.\n")
    assert _rebase(synthetic, out) == 1
    again = plan.read_text()
    assert again.endswith(KEEP + "\n\nGPU box booked for Tuesday.\n") and again.count("## Phase 1") == 1


def test_branch_refuses_uncommitted_changes(synthetic: Synthetic, tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    (synthetic.root / "demo_plugin/other.py").write_text("VALUE = 2\n")
    assert _rebase(synthetic, tmp_path / "docs", "--apply", "--branch") == 2
    err = capsys.readouterr().err
    assert err.startswith("pinport: error: ") and "uncommitted changes" in err and err.count("\n") == 1
    assert synthetic.repo.git("branch", "--list", "rebase/hostlib_v4") == ""


def test_old_older_than_the_base_is_warned(synthetic: Synthetic, tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    _rebase(synthetic, tmp_path / "docs", "--old", "0.1.0")
    printed = capsys.readouterr().out
    assert "warning: --old 0.1.0 is older than the validated base 0.2.0 on rebase/hostlib_v2" in printed


def test_a_new_older_than_old_is_refused_unless_asked(synthetic: Synthetic, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    """`--old 0.2.0 --new 0.1` is a typo far more often than a wish to go back: it is refused (one
    line, exit 2, nothing written) before any host is read; --allow-downgrade plans it."""
    out = tmp_path / "docs"
    args = ["rebase", "--plugin", str(synthetic.root), "--old", "0.2.0", "--old-tree", str(synthetic.old_host),
            "--new", "0.1", "--new-tree", str(synthetic.old_host),
            "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == ("pinport: error: --new 0.1 is older than OLD 0.2.0: a rebase moves the hostlib pin forward "
                   "(pass --allow-downgrade to plan the move back)\n")
    assert not out.exists()
    assert main([*args, "--allow-downgrade"]) == 1  # planned: the plugin's findings on the older host
    assert "-> 0.1" in capsys.readouterr().out and (out / "REBASE_PLAN.md").is_file()


def test_apply_then_the_gate_in_a_host_environment(synthetic: Synthetic, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    import shutil
    import subprocess
    import sys

    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(env)], check=True)
    python = env / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    for name in ("hostlib", "hostlib-0.4.0.dist-info"):
        shutil.copytree(synthetic.new_host / name, Path(purelib) / name)
    code = _rebase(synthetic, tmp_path / "docs", "--apply", "--branch", "--gate", "--gate-python", str(python))
    printed = capsys.readouterr().out
    assert code == 1, printed  # `gone` still fails to import on 0.4.0
    gate = printed.split("pinport gate: ", 1)[1]  # after the rebase summary, the gate's report
    assert "PASS compile: 5 of 5 plugin files compile" in gate and "PASS host: hostlib 0.4.0 imports" in gate
    assert "FAIL import:" in gate and "cannot import name 'gone' from 'hostlib.utils'" in gate
    assert "confirmed PP0601 demo_plugin/patches.py:3" in gate  # the static finding the gate confirms
    assert "import `helper`" not in gate  # the safe fix took it out before the gate ran


def test_a_src_layout_names_files_as_the_repository_does(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Paths in what is printed and written start at the repository root (`src/...`), once."""
    s = build(tmp_path / "src-layout", layout="src/")
    out = tmp_path / "docs"
    assert _rebase(s, out, "--apply", "--branch") == 1
    printed = capsys.readouterr().out
    assert "src/demo_plugin/patches.py:1  import `helper` from `hostlib.helpers`" in printed
    assert "src/demo_plugin/engine_patch.py:16  clean three-way merge of `EnginePatch.step` (mirror)" in printed
    patches = (s.root / "src/demo_plugin/patches.py").read_text()
    assert patches.startswith("from hostlib.utils import kept  # helpers\nfrom hostlib.helpers import helper\n")
    assert "        self.steps += len(batch)\n" in (s.root / "src/demo_plugin/engine_patch.py").read_text()
    documents = "".join((out / name).read_text() for name in ("REBASE_REPORT.md", "REBASE_PLAN.md",
                                                               "REBASE_TEST.md", "REBASE_REPORT.html"))
    assert "src/src/" not in documents and "src/demo_plugin/patches.py:1" in documents
    plan = (out / "REBASE_PLAN.md").read_text()
    assert "### `src/demo_plugin/patches.py`" in plan
    assert "- [x] clean three-way merge of `EnginePatch.step` (mirror, src/demo_plugin/engine_patch.py:16)" in plan
    runbook = (out / "REBASE_TEST.md").read_text()
    row = next(line for line in runbook.splitlines()
               if line.startswith("| `src/demo_plugin/patches.py` `MyRunner.load`"))
    assert "`tests/test_patches.py`" in row
