"""The top-level API: what a Python user needs to run an experiment, write a gate or a
pipeline member, and read a run, as the package docstring shows it."""

from __future__ import annotations

import json

import vreact
from tests.conftest import FULL
from tests.fakes.chaos_server import ChaosServer


def test_run_an_experiment_and_read_it_back_from_python(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ChaosServer(mix={"nonsense": 1.0}, seed=3, deterministic=True) as server:
        path = tmp_path / "tiny.yaml"
        path.write_text(
            json.dumps(
                {
                    "kind": "experiment",
                    "name": "tiny",
                    "dataset": {"path": str(FULL), "limit": 2},
                    "configurations": [{"name": "N"}, {"name": "VG", "gates": True, "guards": True}],
                    "models": {"default": "openai/chaos"},
                    "base_url": server.base_url,
                    "concurrency": 1,
                }
            )
        )
        experiment = vreact.resolve(vreact.load_experiment(str(path)))
        assert isinstance(experiment, vreact.ResolvedExperiment)
        vreact.run_experiment(experiment, tmp_path / "run")
    report = vreact.report(tmp_path / "run")
    assert isinstance(report, vreact.Report) and list(report.configs) == ["N", "VG"]
    records = vreact.read_run(tmp_path / "run")
    assert len(records.attempts) == 4 == sum(r.executed for r in report.configs.values())
    vg = [a for a in records.attempts if a.config == "VG"]
    # schema-valid nonsense never passes VG's gates: every VG attempt shows its verdicts
    assert vg and all(a.verdicts and a.outcome == "abstain" for a in vg)
    assert all(c.messages and c.response is not None for a in records.attempts for c in a.calls)


def test_every_public_name_resolves_and_import_vreact_loads_none_of_them():
    import subprocess
    import sys

    probe = (
        "import sys, vreact; before = {m for m in sys.modules if m.startswith('vreact.')};"
        " [getattr(vreact, n) for n in vreact.__all__]; import vreact.report.html;"
        " print(sorted(before), vreact.report.__module__, vreact.report.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "vreact.report.compute", "compute"]
    for name in vreact.__all__:
        assert getattr(vreact, name) is not None
    assert set(vreact.__all__) <= set(dir(vreact))
    from vreact.report import compute

    assert vreact.report is compute  # the function, though the subpackage vreact.report is imported
    from vreact import report

    assert report is compute
