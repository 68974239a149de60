"""`pinport scan` without --plugin inside a plugin checkout scans that checkout, pin read from it."""

from __future__ import annotations

import json

from harness import write_tree
from pinport.cli.main import main


def test_scan_inside_a_checkout_finds_plugin_and_pin(tmp_path, monkeypatch, capsys):
    old, new, repo = tmp_path / "old", tmp_path / "new", tmp_path / "repo"
    write_tree(old, {"host/__init__.py": "", "host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"})
    write_tree(new, {"host/__init__.py": "", "host/runner.py": "class Runner:\n    def step(self, a, b):\n        pass\n"})
    write_tree(repo, {
        # no [tool.pinport] package setting: the entry point names the package; two others exist
        "setup.py": "setup(entry_points={'host.general_plugins': ['p = acme_plug.boot:register']},\n"
                    "      install_requires=['host==1.0+cpu'])\n",
        "setup.cfg": "[metadata]\nname = acme\n",
        "pyproject.toml": '\ufeff[tool.pinport]\nhost = "host"\n',
        "acme_plug/__init__.py": "",
        "acme_plug/boot.py": "from host.runner import Runner\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n",
        "other_lib/__init__.py": "from host.runner import Runner\n",
    })
    monkeypatch.chdir(repo)
    code = main(["scan", "--new", str(new), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                 "--format", "json", "--old", str(old)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0  # the missing parameter is a warning on an ordinary subclass
    (finding,) = [f for f in report["findings"] if f["code"] == "PP0101"]
    assert finding["plugin"]["path"] == "acme_plug/boot.py" and finding["plugin"]["line"] == 4
    assert not any(f["plugin"] and f["plugin"]["path"].startswith("other_lib/") for f in report["findings"])
