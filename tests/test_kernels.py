"""kernels.compare: alternating boots, runs per boot, the two ratios (no
guest: the boots are faked, the parsing and statistics are real)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from idlesteal.runs import kernels
from idlesteal.guest import topology
from idlesteal.measure import workload
from idlesteal.util import HarnessError

DATA = Path(__file__).parent / "data"
PIPE = (DATA / "perf-pipe-2x2x2-1pair.txt").read_text()


def fake_boots(monkeypatch, per_variant: dict[str, list[list[float]]]) -> list[str]:
    """Each boot of variant V returns the next list of usecs/op values, one
    per run; returns the order in which variants were booted."""
    order: list[str] = []
    left = {v: list(xs) for v, xs in per_variant.items()}
    monkeypatch.setattr(kernels, "ensure", lambda v, prepare=True, force=False: Path(v))
    monkeypatch.setattr(kernels.image, "build_base", lambda tools=(): Path("initrd"))
    monkeypatch.setattr(kernels.provenance, "provenance", lambda builds=None: {})
    monkeypatch.setattr(kernels.build, "read_meta", lambda v: {})
    monkeypatch.setattr(topology.Preset, "verify", lambda self, text: None)

    def run_script(script, preset, kernel, initrd, timeout, name):
        v = str(kernel)
        order.append(v)
        xs = left[v].pop(0)
        assert script.count("perf bench sched pipe") == len(xs)
        sections = {f"output.{i}": PIPE.replace("1044.636000", f"{x:f}")
                    for i, x in enumerate(xs)}
        return SimpleNamespace(sections={"topology": "", **sections}, run_dir=Path("/r"))
    monkeypatch.setattr(kernels.vm, "run_script", run_script)
    return order


def test_boots_alternate_and_a_boot_is_the_median_of_its_runs(monkeypatch, tmp_path):
    order = fake_boots(monkeypatch, {
        "a": [[200, 210, 900], [205, 190, 200], [199, 201, 5000]],
        "b": [[220, 230, 225], [2000, 221, 219], [218, 222, 220]]})
    out = kernels.compare(["a", "b"], topology.get("2x2x2"), workload.get("perf-pipe"), 1,
                          1000, 3, outdir=tmp_path, name="t", runs=3)
    assert order == ["a", "b", "b", "a", "a", "b"]
    data = json.loads(out.json.read_text())
    assert data["values"] == {"a": [210, 200, 201], "b": [225, 221, 220]}
    assert data["runs_per_boot"] == 3 and data["runs"][0]["runs"] == [200, 210, 900]
    assert data["median_ratio"]["value"] == pytest.approx(221 / 201)
    assert "the median of 3 runs per boot" in out.text
    assert "(medians, bootstrap)" in out.text and "Mann-Whitney p" in out.text


def test_runs_must_be_positive(monkeypatch, tmp_path):
    fake_boots(monkeypatch, {"a": [], "b": []})
    with pytest.raises(HarnessError, match="--runs"):
        kernels.compare(["a", "b"], topology.get("2x2x2"), workload.get("perf-pipe"), 1,
                        1000, 2, outdir=tmp_path, runs=0)
