"""`idlesteal collect RUN_DIR`: kept run directories re-parsed into results."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from idlesteal import bench, collect, image, stress, vm
from idlesteal.util import HarnessError

from .test_stress import P as STRESS_PARAMS
from .test_stress import good_sections

DATA = Path(__file__).parent / "data"
CONSOLE = ("[    0.000000] Linux version 7.2.13-idlesteal (gcc) #1 SMP PREEMPT\n"
           "[    1.124659] smp: Bringing up secondary CPUs ...\n"
           "[    4.500000] idlesteal-init: running /run.sh\n")
KASAN = "[   58.000000] BUG: KASAN: slab-use-after-free in try_steal+0x1/0x2\n"


def output_log(sections: dict[str, str], rc: int = 0, end: bool = True) -> str:
    """ttyS1 as the guest writes it (image.parse_output's markers, CRLF)."""
    lines = ["stty noise", image.BEGIN]
    for name, text in sections.items():
        lines.append(f"@@SECTION {name}@@")
        if text:
            lines.append(text.rstrip("\n"))
    if end:
        lines.append(f"@@IDLESTEAL END rc={rc}@@")
    return "\r\n".join(lines) + "\r\n"


def run_dir(tmp_path: Path, meta: dict | None, output: str, console: str = CONSOLE) -> Path:
    d = tmp_path / "runs" / "20260101-000000-x-2x2x2"
    d.mkdir(parents=True)
    (d / "run.sh").write_text("section meta\nuname -a\n")
    (d / "qemu.cmd").write_text("qemu-system-x86_64 -smp 8\n")
    (d / "output.log").write_text(output)
    (d / "console.log").write_text(console)
    if meta is not None:
        (d / vm.RUN_META).write_text(json.dumps(meta, indent=2) + "\n")
    return d


# ---------------------------------------------------------------- bench

SPEC = bench.BenchSpec(a=bench.Side("A", ("NO_STEAL",)), b=bench.Side("B", ("STEAL",)),
                       levels=[1, 2], size=2000, reps=3, waste="off")


def bench_sections(spec: bench.BenchSpec) -> dict[str, str]:
    """What bench.script() makes the guest print, from the captured data."""
    read = lambda name: (DATA / name).read_text()  # noqa: E731
    s = {"meta": "Linux (none) 7.2.13-idlesteal #1 SMP x86_64 GNU/Linux\n",
         "topology": read("topology-2x2x2.txt")}
    for r in bench.plan(spec):
        t = r.tag
        s[f"{t}.features"] = "PLACE_LAG " + " ".join(spec.side(r.side).features) + "\n"
        s[f"{t}.schedstat.before"] = read("schedstat-2x2x2-before.txt")
        s[f"{t}.stat.before"] = read("stat-2x2x2-before.txt")
        s[f"{t}.output"] = read("hackbench-g1-l2000.txt").replace(
            "Time: 131.669", f"Time: {1.0 + 0.1 * r.index}")
        s[f"{t}.stat.after"] = read("stat-2x2x2-after.txt")
        s[f"{t}.schedstat.after"] = read("schedstat-2x2x2-after.txt")
        s[f"{t}.newidle_cost"] = ""
    return s


def bench_meta(name: str = "collected") -> dict:
    return {"kind": "bench", "name": name, "preset": "2x2x2", "variant": "steal",
            "spec": SPEC.to_json(), "build": {"source": {"version": "7.2.13-1"}},
            "qemu": "7.2.22"}


def test_bench_run_dir_collects_into_results(tmp_path: Path):
    d = run_dir(tmp_path, bench_meta(), output_log(bench_sections(SPEC)))
    out = tmp_path / "results"
    res = collect.collect(d, out)
    assert res.kind == "bench" and res.passed is True
    assert res.data["json"] == out / "collected.json" and out / "collected.json" in res.paths
    data = json.loads((out / "collected.json").read_text())
    assert len(data["runs"]) == SPEC.reps * len(SPEC.levels) * 2 == res.measurements
    assert data["meta"]["guest"]["collected"] is True
    assert data["meta"]["guest"]["run_dir"] == str(d)
    assert data["meta"]["debian_version"] == "7.2.13-1" and data["meta"]["qemu_version"] == "7.2.22"
    assert (out / "collected.txt").exists() and res.text == res.data["table"]


def test_missing_run_json_is_a_clear_error(tmp_path: Path):
    d = run_dir(tmp_path, None, output_log(bench_sections(SPEC)))
    with pytest.raises(collect.CollectError) as e:
        collect.collect(d, tmp_path / "results")
    assert isinstance(e.value, HarnessError)
    assert str(d / "run.json") in str(e.value) and "missing" in str(e.value)


def test_unknown_kind_is_an_error(tmp_path: Path):
    d = run_dir(tmp_path, {"kind": "kunit"}, output_log({}))
    with pytest.raises(HarnessError, match="unknown kind 'kunit'"):
        collect.collect(d, tmp_path / "results")


def _drop_section(s: dict[str, str]) -> str:
    del s["r002.schedstat.after"]
    return output_log(s)


def _garble_schedstat(s: dict[str, str]) -> str:
    s["r003.schedstat.after"] = s["r003.schedstat.after"][:200]
    return output_log(s)


@pytest.mark.parametrize("make_output", [
    lambda s: output_log(s)[:len(output_log(s)) // 2],   # cut off: no END marker
    lambda s: output_log(s, end=False),
    _drop_section,
    _garble_schedstat,
    lambda s: output_log(s, rc=1),
], ids=["cut", "no-end", "missing-section", "garbled-schedstat", "rc"])
def test_bad_bench_output_is_a_harness_error(tmp_path: Path, make_output):
    d = run_dir(tmp_path, bench_meta(), make_output(bench_sections(SPEC)))
    with pytest.raises(HarnessError) as e:
        collect.collect(d, tmp_path / "results")
    assert isinstance(e.value, collect.CollectError)
    assert "output.log" in str(e.value)
    assert not (tmp_path / "results" / "collected.json").exists()


def test_bench_with_kernel_errors_raises(tmp_path: Path):
    d = run_dir(tmp_path, bench_meta(), output_log(bench_sections(SPEC)), CONSOLE + KASAN)
    with pytest.raises(collect.CollectError, match="console.log"):
        collect.collect(d, tmp_path / "results")


# ---------------------------------------------------------------- stress

def stress_run(tmp_path: Path, console: str = CONSOLE, end: bool = True) -> Path:
    meta = stress.run_meta("2x2x2", STRESS_PARAMS.seconds, "debug")
    sections = {"meta": "7.2.13-idlesteal\n",
                "topology": (DATA / "topology-2x2x2.txt").read_text(), **good_sections()}
    return run_dir(tmp_path, meta, output_log(sections, end=end), console)


def test_stress_run_dir_collects_and_passes(tmp_path: Path):
    res = collect.collect(stress_run(tmp_path), tmp_path / "stress")
    assert res.kind == "stress"
    assert res.passed is True, res.data["failures"]
    [path] = res.paths
    assert path.parent == tmp_path / "stress"
    assert json.loads(path.read_text())["guest"]["collected"] is True
    assert res.text.startswith("stress 2x2x2 120 s: PASS")


def test_stress_kernel_error_on_the_console_is_judged_fail(tmp_path: Path):
    res = collect.collect(stress_run(tmp_path, CONSOLE + KASAN), tmp_path / "stress")
    assert res.passed is False
    s = json.loads(res.paths[0].read_text())
    assert s["passed"] is False and "kernel reported errors" in s["failures"][0]
    assert s["guest"]["kernel_errors"] == [KASAN.strip()]
    assert "FAIL" in res.text.splitlines()[0]


def test_stress_truncated_output_fails_and_no_output_raises(tmp_path: Path):
    res = collect.collect(stress_run(tmp_path / "a", end=False), tmp_path / "stress")
    assert res.passed is False and any("truncated" in f for f in res.data["failures"])
    d = run_dir(tmp_path / "b", stress.run_meta("2x2x2", 120, "debug"), "no markers\n")
    with pytest.raises(collect.CollectError, match="output.log"):
        collect.collect(d, tmp_path / "stress")
