"""`idlesteal collect RUN_DIR`: kept run directories re-parsed into results."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from idlesteal.runs import bench, collect, host, stress
from idlesteal import cli
from idlesteal.guest import image, vm
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


# ---------------------------------------------------------------- host (bench --host)

def host_offer(features: list[str] | None = None) -> host.Offer:
    """What host.offer() would say of a 2x2x2-shaped machine (the captures'
    topology), its sched/features not readable unless given."""
    topo = host.SysTopology(list(range(8)), [[0, 1], [2, 3], [4, 5], [6, 7]],
                            [[0, 1, 2, 3], [4, 5, 6, 7]], [list(range(8))],
                            [[0, 1, 2, 3], [4, 5, 6, 7]])
    load = host.Load([0.5, 0.4, 0.3], 0, 120, 0.1, 0.0, 8, 1.0)
    return host.Offer(kernel="6.12.0-test", version="Linux version 6.12.0-test", arch="x86_64",
                      root=True, features=features,
                      features_note="" if features else "Operation not permitted",
                      schedstat_version=17, schedstats_sysctl="0", sched_ext=None, scx_ops="",
                      tracefs=True, tracefs_note="mounted", events_missing=[],
                      trace_clocks=["local", "mono"], bpf=True, btf=True, hypervisor=False,
                      topology=topo, load=load, node="server1")


HOST_SPEC = bench.BenchSpec(a=bench.Side("A", ()), b=bench.Side("B", ()), levels=[1, 2],
                            size=2000, reps=3, waste="off")


def host_run_dir(tmp_path: Path, output: str, *, skipped: bool = True) -> Path:
    """A kept `bench --host` run directory: run.sh, helpers.sh, output.log
    and run.json as host.run_script() writes them; no console.log, no qemu.cmd."""
    o = host_offer()
    d = tmp_path / "runs" / "20260101-000000-bench-host"
    d.mkdir(parents=True)
    (d / "run.sh").write_text("section meta\nuname -a\n")
    (d / "helpers.sh").write_text("section() { :; }\n")
    (d / "output.log").write_text(output)
    meta = {"kind": host.RUN_KIND, "name": "hostrun", "spec": HOST_SPEC.to_json(),
            "offer": o.to_json(), "forced_under_load": True}
    if skipped:
        meta["skipped"] = host.skip_note(o.steal_reason())
    (d / vm.RUN_META).write_text(json.dumps(meta, indent=2) + "\n")
    return d


@pytest.mark.parametrize("skipped", [True, False], ids=["note-recorded", "older-run-json"])
def test_host_run_dir_collects_without_a_console(tmp_path: Path, skipped: bool):
    d = host_run_dir(tmp_path, output_log(bench_sections(HOST_SPEC)), skipped=skipped)
    out = tmp_path / "results"
    res = collect.collect(d, out)
    assert res.kind == "host-bench" and res.passed is True
    assert res.measurements == HOST_SPEC.reps * len(HOST_SPEC.levels) * 2
    assert out / "hostrun.json" in res.paths and out / "hostrun.txt" in res.paths
    data = json.loads((out / "hostrun.json").read_text())
    meta = data["meta"]
    assert meta["preset"] == "host" and meta["qemu_version"] == "none (host mode)"
    assert meta["guest"]["collected"] is True and meta["guest"]["run_dir"] == str(d)
    hm = meta["host_mode"]
    assert hm["offer"]["node"] == "server1" and hm["offer"]["topology"]["llc"][1] == [4, 5, 6, 7]
    assert hm["load_end"] is None and hm["forced_under_load"] is True
    assert hm["skipped"].startswith("STEAL A/B skipped: /sys/kernel/debug/sched/features "
                                    "is not readable")
    # the report: the offer block, the skipped A/B, and no console invented
    assert "host: server1, kernel 6.12.0-test (x86_64)" in res.text
    assert "load at end: not recorded in the run directory" in res.text
    assert "host run: no guest console" in res.text
    assert "console.log" not in res.text and "kernel reported errors" not in res.text
    assert not (d / "console.log").exists()
    txt = (out / "hostrun.txt").read_text()
    assert "\nhost: server1, " in txt and txt.rstrip().endswith(res.text.rstrip().split("\n")[-1])


def test_host_run_dir_that_is_cut_or_failed_is_a_clear_error(tmp_path: Path):
    full = output_log(bench_sections(HOST_SPEC))
    d = host_run_dir(tmp_path / "a", full[:len(full) // 2])
    with pytest.raises(collect.CollectError, match="output.log: no .* END markers"):
        collect.collect(d, tmp_path / "results")
    d = host_run_dir(tmp_path / "b", output_log(bench_sections(HOST_SPEC), rc=2))
    with pytest.raises(collect.CollectError, match="rc=2"):
        collect.collect(d, tmp_path / "results")
    meta = json.loads((d / vm.RUN_META).read_text())
    del meta["offer"]["topology"]
    (d / vm.RUN_META).write_text(json.dumps(meta))
    with pytest.raises(collect.CollectError, match="offer"):
        collect.collect(d, tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_host_run_whose_cpus_changed_is_refused(tmp_path: Path):
    s = bench_sections(HOST_SPEC)
    s["topology"] = s["topology"].replace("online 0-7", "online 0-6")
    d = host_run_dir(tmp_path, output_log(s))
    with pytest.raises(collect.CollectError, match="CPUs changed during the run"):
        collect.collect(d, tmp_path / "results")


def test_collect_command_on_a_host_run_dir(tmp_path: Path, capsys):
    d = host_run_dir(tmp_path, output_log(bench_sections(HOST_SPEC)))
    rc = cli.main(["collect", str(d), "--outdir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0 and "host run: no guest console" in out
    assert f"wrote {tmp_path / 'out' / 'hostrun.json'}" in out


# ---------------------------------------------------------------- side by side

def sbs_run_dir(tmp_path: Path, console: str = CONSOLE, **extra) -> tuple[Path, "object"]:
    """A kept side-by-side boot: the real 2x2x2 capture (six schedulers,
    2 repetitions, untraced) with run.json as sidebyside.run() writes it."""
    from idlesteal.runs import sidebyside as sbs, suite
    from .test_sidebyside import CAPTURED
    s = sbs.Spec("2x2x2", suite.parse("2x2x2 hackbench 2 50"), sbs.contenders(CAPTURED), 2,
                 waste=False)
    parsed = image.parse_output((DATA / "sidebyside-2x2x2.txt").read_text())
    assert parsed is not None
    meta = {"kind": "sidebyside", "spec": s.to_json(), "variant": "scx", **extra}
    return run_dir(tmp_path, meta, output_log(parsed.sections), console), s


def test_sidebyside_run_dir_collects_and_leaves_out_an_ejected_peer(tmp_path: Path):
    stall = ('[  411.2] sched_ext: BPF scheduler "cosmos_1.1.7_x86_64_unknown_linux_gnu" '
             'disabled (runnable task stall)\n')
    d, s = sbs_run_dir(tmp_path, CONSOLE + stall, build={"variant": "scx"},
                       peers={"scx_p2dq": "1.1.4"})
    res = collect.collect(d, tmp_path / "out")
    assert res.kind == "sidebyside" and res.passed
    assert res.data["dropped"] == {"scx_cosmos": "the kernel ejected it (runnable task stall)"}
    assert res.measurements == 5 * 2
    data = json.loads((tmp_path / "out" / "2x2x2.json").read_text())
    assert "scx_cosmos" not in data["rows"][0]["contenders"]
    assert data["meta"]["guest"]["collected"] is True and data["meta"]["peers"] == \
        {"scx_p2dq": "1.1.4"}
    assert data["meta"]["builds"] == {"scx": {"variant": "scx"}}
    assert "scx_cosmos: left out" in res.text and (tmp_path / "out" / "2x2x2.txt") in res.paths
    # a run kept before run.json carried the build and the peers' versions
    d2, _ = sbs_run_dir(tmp_path / "old")
    data = json.loads((collect.collect(d2, tmp_path / "out2").data["json"]).read_text())
    assert data["meta"]["peers"] == "not recorded" and data["meta"]["builds"] == {}
    assert data["meta"]["dropped"] == {}


def test_sidebyside_run_dir_that_cannot_be_collected(tmp_path: Path):
    d, s = sbs_run_dir(tmp_path, CONSOLE + KASAN)
    with pytest.raises(collect.CollectError, match="the kernel reported errors"):
        collect.collect(d)
    d, s = sbs_run_dir(tmp_path / "b")
    meta = json.loads((d / vm.RUN_META).read_text())
    meta["spec"]["entries"][0]["levels"] = ["x"]
    (d / vm.RUN_META).write_text(json.dumps(meta))
    with pytest.raises(collect.CollectError, match="does not read back"):
        collect.collect(d)
    d, s = sbs_run_dir(tmp_path / "c")
    (d / "output.log").write_text((d / "output.log").read_text().split("@@IDLESTEAL END")[0])
    with pytest.raises(collect.CollectError, match="truncated"):
        collect.collect(d)


# ---------------------------------------------------------------- staged (vm.stage())

FAKE_QEMU = """#!/bin/sh
# A QEMU that writes what the test put in $FAKE_DIR to its -serial files.
[ "$1" = --version ] && { echo "QEMU emulator version 7.2.22 (fake)"; exit 0; }
echo "$@" >"$FAKE_DIR/args"
n=0
while [ $# -gt 0 ]; do
    if [ "$1" = -serial ]; then
        n=$((n + 1)); cp "$FAKE_DIR/serial$n" "${2#file:}"
    fi
    shift
done
"""


def test_a_staged_bench_run_boots_elsewhere_and_collects(tmp_path: Path, monkeypatch):
    import os
    import subprocess

    from idlesteal.guest import topology
    monkeypatch.setattr(vm.paths, "runs_dir", lambda: tmp_path / "runs")
    kernel, base = tmp_path / "bzImage.built", tmp_path / "base.cpio.gz"
    kernel.write_bytes(b"kernel")
    base.write_bytes(b"base archive")
    with vm.stage(), pytest.raises(vm.Staged) as st:
        vm.run_script("section meta\n", topology.get("2x2x2"), kernel, base, name="bench", cmdline=["foo=1"], meta=bench_meta("staged"))
    d = st.value.run_dir
    assert (d / "bzImage").read_bytes() == b"kernel"
    assert (d / "initrd.cpio.gz").read_bytes().startswith(b"base archive")
    assert json.loads((d / vm.RUN_META).read_text())["staged"] is True
    cmd = (d / "qemu.cmd").read_text()
    assert "-kernel bzImage -initrd initrd.cpio.gz" in cmd and str(tmp_path) not in cmd
    # not booted yet: collect says how to boot it
    with pytest.raises(collect.CollectError, match="staged and not booted yet"):
        collect.collect(d, tmp_path / "results")
    # boot.sh on "another machine": QEMU from PATH, -L from QEMU_DATADIR
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "qemu-system-x86_64").write_text(FAKE_QEMU)
    (fake / "qemu-system-x86_64").chmod(0o755)
    (fake / "serial1").write_text(CONSOLE)
    (fake / "serial2").write_text(output_log(bench_sections(SPEC)))
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "FAKE_DIR": str(fake),
           "QEMU_DATADIR": "/opt/qemu share"}
    subprocess.run(["sh", str(d / vm.BOOT_SCRIPT)], env=env, check=True, cwd=tmp_path)
    args = (fake / "args").read_text()
    assert "-kernel bzImage" in args and args.rstrip().endswith("-L /opt/qemu share")
    booted = (d / vm.BOOTED_ON).read_text()
    assert booted.startswith("before: ") and "CPUs online" in booted
    assert "after: " in booted and "qemu exit status 0" in booted
    res = collect.collect(d, tmp_path / "results")
    data = json.loads((tmp_path / "results" / "staged.json").read_text())
    assert data["meta"]["guest"]["booted_on"] == booted.strip()
    header = (tmp_path / "results" / "staged.txt").read_text().splitlines()[0]
    assert "booted elsewhere (" in header and "host " not in header and res.passed


def test_a_run_with_a_host_share_is_not_staged(tmp_path: Path, monkeypatch):
    from idlesteal.guest import topology
    monkeypatch.setattr(vm.paths, "runs_dir", lambda: tmp_path / "runs")
    with vm.stage(), pytest.raises(HarnessError, match="cannot be staged"):
        vm.run_script("true\n", topology.get("2x2x2"), tmp_path / "k", tmp_path / "i",
                      shares=(vm.Share(tmp_path, "tag"),))
