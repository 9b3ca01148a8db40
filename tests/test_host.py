"""Host mode's parsers and its state keeping, on fake root directories
(idlesteal/runs/host/): the topology from sysfs, what the kernel offers, the
load, the sides of an A/B, and the state saved, changed and put back."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from idlesteal.runs import bench, host
from idlesteal.runs.host import lock as host_lock, state as host_state
from idlesteal.measure import workload

EVENTS = host.EVENTS


def put(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def fake_sysfs(root: Path, *, llcs: list[list[int]], smt: int = 1, nodes: list[list[int]] | None = None,
               index3: bool = True, capacity: dict[int, int] | None = None,
               online: str | None = None) -> None:
    cpus = [c for g in llcs for c in g]
    base = "sys/devices/system/cpu"
    put(root, f"{base}/online", (online or f"0-{max(cpus)}") + "\n")
    for g in llcs:
        for c in g:
            sib = [x for x in g if x // smt == c // smt]
            put(root, f"{base}/cpu{c}/topology/thread_siblings_list", host._cpulist(sib) + "\n")
            put(root, f"{base}/cpu{c}/topology/physical_package_id", "0\n")
            put(root, f"{base}/cpu{c}/cache/index0/level", "1\n")
            put(root, f"{base}/cpu{c}/cache/index0/type", "Data\n")
            put(root, f"{base}/cpu{c}/cache/index0/shared_cpu_list", host._cpulist(sib) + "\n")
            put(root, f"{base}/cpu{c}/cache/index2/level", "2\n")
            put(root, f"{base}/cpu{c}/cache/index2/type", "Unified\n")
            put(root, f"{base}/cpu{c}/cache/index2/shared_cpu_list", host._cpulist(g) + "\n")
            if index3:
                put(root, f"{base}/cpu{c}/cache/index3/shared_cpu_list", host._cpulist(g) + "\n")
            if capacity:
                put(root, f"{base}/cpu{c}/cpu_capacity", f"{capacity[c]}\n")
    for i, n in enumerate(nodes or []):
        put(root, f"sys/devices/system/node/node{i}/cpulist", host._cpulist(n) + "\n")


# ---------------------------------------------------------------- topology

def test_topology_from_sysfs_two_llcs_smt_two_nodes(tmp_path):
    fake_sysfs(tmp_path, llcs=[[0, 1, 2, 3], [4, 5, 6, 7]], smt=2, nodes=[[0, 1, 2, 3], [4, 5, 6, 7]])
    t = host.read_topology(tmp_path)
    assert t.online == list(range(8))
    assert t.llc == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert t.smt == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert t.nodes == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert t.llc_source == "cache/index3/shared_cpu_list"
    w = t.waste_topology()
    assert w.llc[5] == 1 and w.node[5] == 1 and w.cpus == list(range(8))
    d = t.describe()
    assert "8 CPUs online (0-7)" in d and "2 LLC(s) [0-3 | 4-7]" in d and "4 cores of 2 threads" in d


def test_topology_offline_cpus_no_index3_and_capacities(tmp_path):
    fake_sysfs(tmp_path, llcs=[[0, 1], [2, 3]], index3=False, online="0-2",
               capacity={0: 1024, 1: 1024, 2: 512, 3: 512})
    t = host.read_topology(tmp_path)
    assert t.online == [0, 1, 2]
    assert t.llc == [[0, 1], [2]]                  # offline CPU 3 left out
    assert "index2" in t.llc_source and "no index3" in t.llc_source
    assert t.nodes == [[0, 1, 2]]                  # no node directory: one node
    assert t.capacity == {0: 1024, 1: 1024, 2: 512}
    assert "capacities 512, 1024" in t.describe()


def test_topology_without_cache_information_uses_the_package(tmp_path):
    put(tmp_path, "sys/devices/system/cpu/online", "0-1\n")
    for c in (0, 1):
        put(tmp_path, f"sys/devices/system/cpu/cpu{c}/topology/physical_package_id", "0\n")
    t = host.read_topology(tmp_path)
    assert t.llc == [[0, 1]] and t.smt == [[0], [1]] and "package" in t.llc_source


def test_topology_llc_spanning_nodes_is_refused_for_the_measure(tmp_path):
    fake_sysfs(tmp_path, llcs=[[0, 1, 2, 3]], nodes=[[0, 1], [2, 3]])
    with pytest.raises(host.HostError, match="sub-NUMA"):
        host.read_topology(tmp_path).waste_topology()


def test_check_same_sees_a_cpu_gone_offline():
    t = host.SysTopology([0, 1, 2, 3], [[0], [1], [2], [3]], [[0, 1, 2, 3]], [[0, 1, 2, 3]],
                         [[0, 1, 2, 3]])
    snippet = "".join(f"cpu {c} smt={c} llc=0-3 pkg=0\n" for c in range(4)) + \
        "node 0 cpus=0-3\nonline 0-3\n"
    assert host.check_same(t, snippet) == []
    assert "online CPUs 0-2" in host.check_same(t, snippet.replace("online 0-3", "online 0-2"))[0]


def test_cpulist_round_trip():
    assert host._cpulist([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert host._cpulist([]) == "-"


# ---------------------------------------------------------------- load

STAT0 = "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\n" \
    "cpu1 50 0 50 400 0 0 0 0 0 0\nprocs_running 1\n"
STAT1 = "cpu  250 0 150 900 0 0 0 20 0 0\ncpu0 125 0 75 450 0 0 0 10 0 0\n" \
    "cpu1 125 0 75 450 0 0 0 10 0 0\nprocs_running 4\n"


def test_load_between_two_proc_stat_snapshots():
    ld = host.load_between(STAT0, STAT1, "1.50 0.80 0.30 3/170 1234\n", 1.0)
    # 320 ticks passed, 100 idle: 220 / 320 busy of 2 CPUs; 20 stolen
    assert ld.busy_cpus == pytest.approx(2 * 220 / 320, abs=1e-3)
    assert ld.steal_pct == pytest.approx(100 * 20 / 320, abs=0.01)
    assert ld.runnable == 3 and ld.tasks == 170 and ld.loadavg == [1.5, 0.8, 0.3]
    why = ld.too_high(0.25)
    assert why and "CPUs busy" in why and "3 other runnable" in why and "load average 1.50" in why
    quiet = host.load_between(STAT0, STAT0.replace("procs_running 1", "procs_running 1"),
                              "0.01 0.02 0.00 1/170 1\n", 1.0)
    assert quiet.too_high(0.25) is None and quiet.runnable == 0


def test_parse_loadavg_rejects_garbage():
    with pytest.raises(host.HostError):
        host.parse_loadavg("nonsense")


# ---------------------------------------------------------------- what the kernel offers

def fake_kernel(root: Path, *, features: str | None = "PLACE_LAG NO_HRTICK STEAL WA_IDLE\n",
                schedstat: bool = True, scx: str | None = None, tracefs: bool = True,
                events: tuple[str, ...] = EVENTS, hypervisor: bool = False) -> None:
    fake_sysfs(root, llcs=[[0, 1], [2, 3]], nodes=[[0, 1, 2, 3]])
    mounts = "proc /proc proc rw 0 0\nsysfs /sys sysfs rw 0 0\n"
    if features is not None:
        put(root, host.FEATURES, features)
        put(root, host.VERBOSE, "N\n")
        mounts += "debugfs /sys/kernel/debug debugfs rw 0 0\n"
    if schedstat:
        put(root, "proc/schedstat", "version 17\ntimestamp 1\n")
        put(root, host.SCHEDSTATS, "0\n")
    if scx is not None:
        put(root, host.SCHED_EXT + "/state", scx + "\n")
        put(root, host.SCHED_EXT + "/root/ops", "")
    if tracefs:
        t = host.TRACEFS
        mounts += "tracefs /sys/kernel/tracing tracefs rw 0 0\n"
        put(root, f"{t}/trace", "")
        put(root, f"{t}/tracing_on", "1\n")
        put(root, f"{t}/buffer_size_kb", "7 (expanded: 1408)\n")
        put(root, f"{t}/trace_clock", "[local] global counter uptime perf mono mono_raw boot\n")
        put(root, f"{t}/options/overwrite", "1\n")
        for e in events:
            put(root, f"{t}/events/sched/{e}/enable", "0\n")
        for c in range(4):
            put(root, f"{t}/per_cpu/cpu{c}/buffer_size_kb", "7 (expanded: 1408)\n")
    put(root, "proc/mounts", mounts)
    put(root, "proc/filesystems", "nodev\tsysfs\nnodev\ttracefs\nnodev\tdebugfs\n")
    put(root, "proc/version", "Linux version 7.2.0 (test)\n")
    put(root, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme"
        + (" hypervisor" if hypervisor else "") + " lm\n")
    put(root, "proc/sys/kernel/bpf_stats_enabled", "0\n")
    put(root, "proc/stat", STAT0)
    put(root, "proc/loadavg", "0.00 0.00 0.00 1/100 1\n")
    put(root, "proc/meminfo", "MemTotal:        8000000 kB\n")


def test_offer_of_a_series_kernel(tmp_path):
    fake_kernel(tmp_path, scx="disabled", hypervisor=True)
    put(tmp_path, "sys/kernel/btf/vmlinux", "")
    o = host.offer(tmp_path, euid=0)
    assert o.steal and o.steal_reason() == "" and o.schedstat_version == 17
    assert o.has_features(("NO_STEAL", "HRTICK")) and not o.has_features(("NOPE",))
    assert o.sched_ext == "disabled" and o.scx_reason() == "" and o.btf and o.bpf and o.root
    assert o.tracefs and o.events_missing == [] and o.measure_reason() == ""
    assert o.hypervisor
    block = o.block()
    assert "STEAL yes" in block and "version 17" in block and "a VM" in block
    assert "state disabled" in block and "events all 6" in block and "2 LLC(s)" in block
    assert json.loads(json.dumps(o.to_json()))["steal"] is True


def test_offer_of_a_stock_kernel_says_what_it_lacks(tmp_path):
    fake_kernel(tmp_path, features="PLACE_LAG NO_HRTICK\n", schedstat=False,
                events=EVENTS[:-1])
    o = host.offer(tmp_path, euid=1000)
    assert not o.steal and "not built with the series" in o.steal_reason()
    assert o.schedstat_version is None and "nan" in o.block()
    assert o.sched_ext is None and "no sched_ext" in o.scx_reason()
    assert o.measure_reason() == "tracefs lacks the events sched_process_exit"
    assert not o.root and "root: no" in o.block() and "hypervisor: no" in o.block()


def test_offer_with_unreadable_features_and_no_tracefs_mounted(tmp_path):
    fake_kernel(tmp_path, features=None, tracefs=False)
    o = host.offer(tmp_path, euid=0)
    assert o.features is None and "debugfs is not mounted" in o.features_note
    assert "not readable" in o.steal_reason()
    assert o.tracefs and "not mounted" in o.tracefs_note   # mountable: /proc/filesystems
    put(tmp_path, "proc/filesystems", "nodev\tsysfs\n")
    o = host.offer(tmp_path, euid=0)
    assert not o.tracefs and o.measure_reason().startswith("no tracefs")


def test_parsers_of_the_small_files():
    assert host.parse_trace_clock("[local] global mono\n") == ("local", ["local", "global", "mono"])
    assert host.parse_schedstat_version("version 17\ntimestamp 3\n") == 17
    assert host.parse_schedstat_version(None) is None
    assert host.feature_names(["NO_STEAL", "PLACE_LAG"]) == {"STEAL", "PLACE_LAG"}
    assert host.cpuinfo_hypervisor("flags\t: fpu hypervisor\n")
    assert not host.cpuinfo_hypervisor("flags\t: fpu\nbugs\t: hypervisor\n")
    assert host._buffer_kb("7 (expanded: 1408)\n") == "1408" and host._buffer_kb("X\n") == "X"
    assert host._same_kb("1408", "1410") and not host._same_kb("1408", "8192")


# ---------------------------------------------------------------- the sides of an A/B

def spec(a=("NO_STEAL",), b=("STEAL",)) -> bench.BenchSpec:
    return bench.BenchSpec(a=bench.Side("A", a), b=bench.Side("B", b), levels=[1], size=10,
                           reps=2)


def test_sides_on_a_series_kernel_are_as_asked(tmp_path):
    fake_kernel(tmp_path)
    o = host.offer(tmp_path, euid=0)
    s, note = host.sides(spec(), o, explicit=True)
    assert s.a.features == ("NO_STEAL",) and note == ""


def test_sides_without_the_series(tmp_path):
    fake_kernel(tmp_path, features="PLACE_LAG NO_HRTICK\n")
    o = host.offer(tmp_path, euid=0)
    with pytest.raises(host.HostError) as e:
        host.sides(spec(), o, explicit=True)
    msg = str(e.value)
    assert "\n" not in msg and "NO_STEAL against STEAL cannot run" in msg
    assert "not built with the series" in msg
    s, note = host.sides(spec(), o, explicit=False)
    assert s.a.features == () and s.b.features == () and s.a.name == "(unchanged)"
    assert note.startswith("STEAL A/B skipped: ") and "A/A" in note
    # features the stock kernel has: as asked
    s, note = host.sides(spec(("NO_HRTICK",), ("HRTICK",)), o, explicit=True)
    assert s.b.features == ("HRTICK",) and note == ""
    # the A/A keeps what both sides share and the kernel has (suite --host
    # --delay-dequeue off), and drops what it lacks
    s, note = host.sides(spec(("NO_STEAL", "NO_PLACE_LAG", "NO_X"),
                              ("STEAL", "NO_PLACE_LAG", "NO_X")), o, explicit=False)
    assert s.a.features == s.b.features == ("NO_PLACE_LAG",) and "A/A" in note


# ---------------------------------------------------------------- state: save, change, restore

def kernel_write(path: Path, value: str) -> None:
    """What the kernel does with a write to these files."""
    v = value.strip()
    if path.name == "features":
        base = v[3:] if v.startswith("NO_") else v
        words = [v if (w[3:] if w.startswith("NO_") else w) == base else w
                 for w in path.read_text().split()]
        path.write_text(" ".join(words) + "\n")
    elif path.name == "trace_clock":
        words = [w.strip("[]") for w in path.read_text().split()]
        path.write_text(" ".join(f"[{w}]" if w == v else w for w in words) + "\n")
    elif path.name == "buffer_size_kb" and v.isdigit():
        kb = -(-int(v) * 1024 // 4080) * 4080 // 1024          # whole data pages
        path.write_text(f"{kb}\n")
        for p in path.parent.glob("per_cpu/cpu*/buffer_size_kb"):
            p.write_text(f"{kb}\n")
    elif path.name == "trace":
        path.write_text("")
    else:
        path.write_text(value + "\n")


def use_write(monkeypatch, write) -> None:
    """`write` in place of host mode's writes to the kernel's files: _write,
    looked up where it is called, in state (restore(), SysRq-S) and lock
    (session()'s schedstats)."""
    for mod in (host_state, host_lock):
        monkeypatch.setattr(mod, "_write", write)


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    use_write(monkeypatch, kernel_write)
    fake_kernel(tmp_path)
    return tmp_path


def what_a_run_does(root: Path) -> None:
    """helpers.sh's trace_setup / trace_on and a STEAL A/B's set_features."""
    t = root / host.TRACEFS
    kernel_write(t / "tracing_on", "0")
    kernel_write(t / "buffer_size_kb", "8192")
    kernel_write(t / "trace_clock", "mono")
    kernel_write(t / "options/overwrite", "0")
    for e in EVENTS:
        kernel_write(t / f"events/sched/{e}/enable", "1")
    kernel_write(t / "tracing_on", "1")
    (t / "trace").write_text("lots of events\n")
    kernel_write(root / host.FEATURES, "NO_STEAL")
    kernel_write(root / host.VERBOSE, "Y")


def test_snapshot_reads_the_state(kernel):
    s = host.snapshot(kernel)
    assert s.features == ["PLACE_LAG", "NO_HRTICK", "STEAL", "WA_IDLE"]
    assert s.tracing_on == "1" and s.buffer_size_kb == "1408" and s.trace_clock == "local"
    assert s.overwrite == "1" and s.events == {e: "0" for e in EVENTS}
    assert s.verbose == "N" and s.schedstats == "0"


def test_restore_puts_everything_back(kernel):
    before = host.snapshot(kernel)
    what_a_run_does(kernel)
    changed = host.differences(before, host.snapshot(kernel))
    assert len(changed) >= 6
    assert host.restore(before, kernel, umount=lambda p: None) == []
    assert host.differences(before, host.snapshot(kernel)) == []
    assert (kernel / host.TRACEFS / "trace").read_text() == ""        # the run's events gone


def test_restore_per_cpu_buffer_sizes(kernel):
    t = kernel / host.TRACEFS
    (t / "buffer_size_kb").write_text("X\n")
    (t / "per_cpu/cpu1/buffer_size_kb").write_text("2048\n")
    before = host.snapshot(kernel)
    assert before.buffer_size_kb == "X" and before.per_cpu_kb["cpu1"] == "2048"
    what_a_run_does(kernel)                               # one size for all: 8192
    host.restore(before, kernel, umount=lambda p: None)
    for c, kb in before.per_cpu_kb.items():
        have = (t / "per_cpu" / c / "buffer_size_kb").read_text().strip()
        assert host._same_kb(kb, have), (c, kb, have)
    assert (t / "per_cpu/cpu1/buffer_size_kb").read_text().strip() == "2051"  # whole pages


def test_restore_reports_what_it_cannot_put_back(kernel, monkeypatch):
    before = host.snapshot(kernel)
    what_a_run_does(kernel)

    def refuse(path: Path, value: str) -> None:
        if path.name == "trace_clock":
            raise PermissionError(1, "Operation not permitted")
        kernel_write(path, value)
    use_write(monkeypatch, refuse)
    problems = host.restore(before, kernel, umount=lambda p: None)
    assert any("trace_clock" in p and "Operation not permitted" in p for p in problems)


class Mounts:
    """mount/umount on the fake root: /proc/mounts lines."""

    def __init__(self, root: Path) -> None:
        self.root, self.calls = root, []

    def mount(self, fs: str, target: Path) -> None:
        self.calls.append(("mount", fs, str(target.relative_to(self.root))))
        with open(self.root / "proc/mounts", "a") as f:
            f.write(f"{fs} /{target.relative_to(self.root)} {fs} rw 0 0\n")

    def umount(self, target: Path) -> None:
        rel = "/" + str(target.relative_to(self.root))
        self.calls.append(("umount", rel.lstrip("/")))
        m = self.root / "proc/mounts"
        m.write_text("".join(l for l in m.read_text().splitlines(keepends=True)
                             if l.split()[1] != rel))


def test_session_mounts_saves_and_restores_on_success(kernel):
    # debugfs mounted by the fake kernel, tracefs files there but not in /proc/mounts
    m = (kernel / "proc/mounts")
    m.write_text(m.read_text().replace("tracefs /sys/kernel/tracing tracefs rw 0 0\n", ""))
    (kernel / host.TRACEFS / "trace").unlink()           # as if not mounted
    mo = Mounts(kernel)

    def mount_tracefs(fs: str, target: Path) -> None:
        mo.mount(fs, target)
        (target / "trace").write_text("")
    with host.session(kernel, mount=mount_tracefs, umount=mo.umount) as s:
        assert s.state.mounts_made == [host.TRACEFS]
        before = s.state          # as found, once tracefs could be read
        assert (kernel / host.SCHEDSTATS).read_text().strip() == "1"     # on for the run
        saved = json.loads((kernel / host.STATE).read_text())
        assert saved["pid"] == os.getpid() and saved["mounts_made"] == [host.TRACEFS]
        what_a_run_does(kernel)
    assert mo.calls == [("mount", "tracefs", host.TRACEFS), ("umount", host.TRACEFS)]
    assert not (kernel / host.STATE).exists()
    assert host.differences(before, host.snapshot(kernel)) == []


def test_session_restores_on_failure_and_on_sigterm(kernel):
    before = host.snapshot(kernel)
    with pytest.raises(RuntimeError):
        with host.session(kernel, umount=lambda p: None):
            what_a_run_does(kernel)
            raise RuntimeError("the workload failed")
    assert host.differences(before, host.snapshot(kernel)) == []
    with pytest.raises(host.Stopped) as e:
        with host.session(kernel, umount=lambda p: None):
            what_a_run_does(kernel)
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()          # the handler raises before this returns
    assert e.value.signum == signal.SIGTERM
    assert host.differences(before, host.snapshot(kernel)) == []
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with pytest.raises(KeyboardInterrupt):                # Ctrl-C
        with host.session(kernel, umount=lambda p: None):
            what_a_run_does(kernel)
            raise KeyboardInterrupt
    assert host.differences(before, host.snapshot(kernel)) == []


def test_two_sessions_do_not_overlap(kernel):
    with host.session(kernel, umount=lambda p: None):
        with pytest.raises(host.HostError, match=rf"another host run \(pid {os.getpid()}\)"):
            with host.session(kernel, umount=lambda p: None):
                pass
    with host.session(kernel, umount=lambda p: None):      # free again
        pass


def test_a_killed_run_is_restored_by_the_next(kernel, capsys):
    before = host.snapshot(kernel)
    before.pid = 4242
    (kernel / host.STATE).parent.mkdir(parents=True, exist_ok=True)
    (kernel / host.STATE).write_text(json.dumps(before.to_json()))
    what_a_run_does(kernel)                               # then SIGKILL: nothing put back
    with host.session(kernel, umount=lambda p: None) as s:
        assert "pid 4242" in s.recovered and "put back" in s.recovered
        assert host.differences(before, s.state) == []    # found as before the killed run
    assert host.differences(before, host.snapshot(kernel)) == []
    assert not (kernel / host.STATE).exists()


def test_stub_schedstat_and_nan_fields():
    s = spec(a=(), b=())
    runs = bench.plan(s)
    sections = host._stub_schedstat({}, runs, [0, 1])
    assert sections["r001.schedstat.before"].startswith("version 17\ntimestamp 0\ncpu0 0")
    bench.check_schedstat(sections, runs, 2)

    class M:
        sched = idle = wake = steal = steal_fail = steal_ns = newidle_lb = newidle_gained = 1.0
        split: dict | None = {}
    m = M()
    host.no_schedstat([m])
    assert m.sched != m.sched and m.split is None


def test_script_path_puts_file_dirs_first(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin")
    assert host.script_path([Path("/opt/x"), Path("/opt/x")]).startswith("/opt/x:/usr/bin:")


@pytest.mark.parametrize("argv,want", [
    (["bench", "--force-load"], "argument --force-load: invalid value True (want it only with --host)"),
    (["bench", "--max-load", "0.5"], "argument --max-load: invalid value '0.5'"),
    (["bench", "--host", "--force"], "argument --force: invalid value True (want no --force with --host"),
])
def test_host_options_go_together(argv, want, capsys):
    from idlesteal import cli
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and want in err, err


def test_trace_buffer_on_the_host():
    from idlesteal.measure import tracerun
    assert host.trace_kb(2, 24000) == host.TRACE_KB                   # 128 MB of 24 GB
    assert host.trace_kb(160, 65536) == 65536 * 1024 // 16 // 160     # a sixteenth in all
    assert host.trace_kb(64, 1024) == tracerun.DEFAULT_KB             # never below the guest's
    s = spec(a=(), b=())
    assert "trace_setup 65536\n" in bench.script(s, bench.plan(s), 2, 24000, trace_kb=65536)
    assert "trace_setup 65536" not in bench.script(s, bench.plan(s), 2, 24000)


def test_the_run_traces_in_an_instance_of_its_own(kernel):
    (kernel / host.TRACEFS / "instances").mkdir()
    top = kernel / host.TRACEFS / "trace"
    top.write_text("someone else's trace\n")
    before = host.snapshot(kernel)
    inst = kernel / host.INSTANCE
    with host.session(kernel, umount=lambda p: None) as s:
        assert s.state.instance_made == host.INSTANCE and inst.is_dir()
        assert json.loads((kernel / host.STATE).read_text())["instance_made"] == host.INSTANCE
    assert not inst.exists()
    assert host.differences(before, host.snapshot(kernel)) == []
    assert top.read_text() == "someone else's trace\n"      # nothing differed: not written
    # an instance of that name already there: refused, nothing changed
    inst.mkdir()
    with pytest.raises(host.HostError, match="exists already"):
        with host.session(kernel, umount=lambda p: None):
            pass
    assert inst.is_dir() and not (kernel / host.STATE).exists()


def test_a_killed_runs_instance_is_removed_by_the_next(kernel):
    (kernel / host.TRACEFS / "instances/idlesteal").mkdir(parents=True)
    old = host.snapshot(kernel)
    old.pid, old.instance_made = 4243, host.INSTANCE
    (kernel / host.STATE).parent.mkdir(parents=True, exist_ok=True)
    (kernel / host.STATE).write_text(json.dumps(old.to_json()))
    with host.session(kernel, umount=lambda p: None) as s:
        assert "pid 4243" in s.recovered and (kernel / host.INSTANCE).is_dir()  # made anew
    assert not (kernel / host.INSTANCE).exists()


# ---------------------------------------------------------------- suite --host

def custom_spec(binary: str) -> bench.BenchSpec:
    w = workload.custom(binary, f"{binary} {{level}}", r"t=([0-9.]+)", False)
    return bench.BenchSpec(a=bench.Side("A", ("NO_STEAL",)), b=bench.Side("B", ("STEAL",)),
                           levels=[1], size=1, reps=2, workload=w.name, custom=w.to_json())


class FakeBench:
    """host.bench() in place: shows the offer and the skipped A/B as a run on
    a stock kernel does, then fails or refuses where told."""

    def __init__(self, fail: set[str] = set(), refuse: set[str] = set()) -> None:
        self.calls: list[str] = []
        self.fail, self.refuse = fail, refuse

    def __call__(self, spec, name, outdir, *, explicit_ab, max_load, force_load, show, root):
        self.calls.append(name)
        show(f"host: fake, kernel 6.12 (x86_64)\n  load at start: {len(self.calls)}\n")
        show("STEAL A/B skipped: sched/features has no STEAL")
        if name in self.refuse:
            raise host.Refused("--host: the machine is already loaded (3 CPUs busy)")
        if name in self.fail:
            raise host.HostError("the script exited with rc=1")
        return {"table": f"table of {name}\n"}


def test_suite_on_the_host_runs_skips_and_goes_on_after_a_failure(tmp_path, monkeypatch):
    fake = FakeBench(fail={"host-b"})
    monkeypatch.setattr(host, "bench", fake)
    shown: list[str] = []
    specs = [("host-a", custom_spec("sh")), ("host-missing", custom_spec("idlesteal-no-prog")),
             ("host-b", custom_spec("true")), ("host-c", custom_spec("sh"))]
    res = host.suite(specs, tmp_path, explicit_ab=False, show=shown.append, root=tmp_path)
    assert fake.calls == ["host-a", "host-b", "host-c"]
    assert res.done == ["host-a", "host-c"] and res.stopped == ""
    assert res.failed == [("host-b", "the script exited with rc=1")]
    assert res.skipped == [("host-missing", "idlesteal-no-prog is not installed on this machine")]
    # one line for the skipped entry, before any run; the offer and the A/A note once
    assert shown[0] == ("suite --host: host-missing skipped: idlesteal-no-prog is not "
                        "installed on this machine")
    assert sum(s.startswith("host: ") for s in shown) == 1
    assert sum(s.startswith("STEAL A/B skipped") for s in shown) == 1
    assert "== host-c\ntable of host-c" in shown


def test_suite_on_the_host_stops_at_a_refusal(tmp_path, monkeypatch):
    fake = FakeBench(refuse={"host-b"})
    monkeypatch.setattr(host, "bench", fake)
    specs = [("host-a", custom_spec("sh")), ("host-b", custom_spec("sh")),
             ("host-c", custom_spec("sh"))]
    res = host.suite(specs, tmp_path, explicit_ab=False, show=lambda t: None, root=tmp_path)
    assert fake.calls == ["host-a", "host-b"] and res.done == ["host-a"]
    assert res.stopped == "--host: the machine is already loaded (3 CPUs busy)"


def test_suite_on_the_host_needs_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(host, "bench", FakeBench())
    res = host.suite([("host-a", custom_spec("sh"))], Path("/nonexistent"), explicit_ab=False,
                     show=lambda t: None)
    assert "needs root" in res.stopped and res.done == []


def test_the_a_b_refused_and_the_lock_are_refusals(kernel):
    fake_kernel(kernel, features="PLACE_LAG NO_HRTICK\n")
    with pytest.raises(host.Refused):
        host.sides(spec(), host.offer(kernel, euid=0), explicit=True)
    with host.session(kernel, mount=lambda fs, t: None, umount=lambda t: None):
        with pytest.raises(host.Refused, match="another host run"):
            with host.session(kernel, mount=lambda fs, t: None, umount=lambda t: None):
                pass


# ---------------------------------------------------------------- side-by-side --host

def scx_kernel_write(path: Path, value: str) -> None:
    """kernel_write, and SysRq-S: sched_ext gives the tasks back."""
    if path.name == "sysrq-trigger":
        if value == "S":
            (path.parents[1] / host.SCHED_EXT / "state").write_text("disabled\n")
        return
    kernel_write(path, value)


@pytest.mark.parametrize("left", ["disabling", "enabled"])
def test_restore_puts_out_a_sched_ext_scheduler_the_run_left(tmp_path, monkeypatch, left):
    use_write(monkeypatch, scx_kernel_write)
    fake_kernel(tmp_path, scx="disabled")
    put(tmp_path, host.SYSRQ, "")
    before = host.snapshot(tmp_path)
    assert before.sched_ext == "disabled"
    put(tmp_path, host.SCHED_EXT + "/state", left + "\n")
    if left == "disabling":      # a loader that is exiting: no SysRq needed
        monkeypatch.setattr(host_state.time, "sleep", lambda s: put(
            tmp_path, host.SCHED_EXT + "/state", "disabled\n"))
    assert host.restore(before, tmp_path, umount=lambda p: None) == []
    assert host.snapshot(tmp_path).sched_ext == "disabled"


def test_restore_says_when_sched_ext_cannot_be_put_out(tmp_path, monkeypatch):
    use_write(monkeypatch, kernel_write)      # SysRq-S does nothing
    fake_kernel(tmp_path, scx="disabled")
    put(tmp_path, host.SYSRQ, "")
    before = host.snapshot(tmp_path)
    put(tmp_path, host.SCHED_EXT + "/state", "enabled\n")
    monkeypatch.setattr(host_state.time, "monotonic", iter(range(0, 10000, 20)).__next__)
    problems = host.restore(before, tmp_path, umount=lambda p: None)
    assert any("sched_ext still 'enabled' after SysRq-S" in p for p in problems), problems


def test_a_scheduler_loaded_before_the_run_is_left_alone(tmp_path, monkeypatch):
    use_write(monkeypatch, scx_kernel_write)
    fake_kernel(tmp_path, scx="enabled")
    put(tmp_path, host.SYSRQ, "")
    before = host.snapshot(tmp_path)
    assert host.restore(before, tmp_path, umount=lambda p: None) == []
    assert (tmp_path / host.SYSRQ).read_text() == ""
    assert host.snapshot(tmp_path).sched_ext == "enabled"


def _cs(root: Path):
    from idlesteal.runs import sidebyside
    put(root, "sys/kernel/btf/vmlinux", "")
    return sidebyside.contenders("eevdf,eevdf+steal,scx_idlesteal,scx_bpfland")


def test_fit_on_a_series_kernel_with_sched_ext(tmp_path):
    from idlesteal.runs import hostsbs
    fake_kernel(tmp_path, scx="disabled")
    kept, skipped = hostsbs.fit(_cs(tmp_path), host.offer(tmp_path, euid=0))
    assert [c.name for c in kept] == ["eevdf", "eevdf+steal", "scx_idlesteal", "scx_bpfland"]
    assert kept[0].features == ("NO_STEAL",) and skipped == []


def test_fit_on_a_stock_kernel_drops_what_it_cannot_run(tmp_path):
    from idlesteal.runs import hostsbs
    fake_kernel(tmp_path, features="PLACE_LAG WA_IDLE\n", scx="disabled")
    kept, skipped = hostsbs.fit(_cs(tmp_path), host.offer(tmp_path, euid=0))
    # NO_STEAL of a kernel without STEAL: nothing to turn off
    assert [(c.name, c.features) for c in kept] == [
        ("eevdf", ()), ("scx_idlesteal", ()), ("scx_bpfland", ())]
    assert skipped == [("eevdf+steal", "sched/features has no STEAL: the running kernel is "
                        "not built with the series")]


def test_fit_without_sched_ext_or_readable_features(tmp_path):
    from idlesteal.runs import hostsbs
    fake_kernel(tmp_path, features=None)
    kept, skipped = hostsbs.fit(_cs(tmp_path), host.offer(tmp_path, euid=0))
    assert [c.name for c in kept] == ["eevdf"]
    why = dict(skipped)
    assert why["eevdf+steal"].startswith("/sys/kernel/debug/sched/features is not readable")
    assert why["scx_idlesteal"].startswith("the running kernel has no sched_ext")


def test_fit_with_a_scheduler_already_loaded(tmp_path):
    from idlesteal.runs import hostsbs
    fake_kernel(tmp_path, scx="enabled")
    put(tmp_path, host.SCHED_EXT + "/root/ops", "rusty\n")
    kept, skipped = hostsbs.fit(_cs(tmp_path), host.offer(tmp_path, euid=0))
    assert [c.name for c in kept] == ["eevdf", "eevdf+steal"]
    assert dict(skipped)["scx_bpfland"] == "a sched_ext scheduler is already loaded (rusty)"


def test_side_by_side_script_without_features_reads_none():
    from idlesteal.runs import sidebyside, suite
    e = suite.Entry(suite.HOST, "hackbench", [1], 50)
    cs = [sidebyside.Contender("eevdf", ()), sidebyside.Contender(
        "scx_idlesteal", (), ("scx_idlesteal",), "idlesteal")]
    spec = sidebyside.Spec(suite.HOST, [e], cs, 2)
    text = sidebyside.script(spec, sidebyside.plan(spec), trace_kb=4096)
    assert "sched/features" not in text and "set_features" not in text
    assert "trace_setup 4096" in text and "scx_start /tmp/L001.log scx_idlesteal" in text


def _leftover(cwd: Path) -> "subprocess.Popen[bytes]":
    """A stand-in for a killed run's script: a shell and its child in a
    process group of their own, working in `cwd`."""
    import subprocess
    return subprocess.Popen(["/bin/sh", "-c", "sleep 600 & wait"], cwd=cwd,
                            start_new_session=True)


def test_a_killed_runs_script_is_ended_by_the_next(kernel, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    p = _leftover(run_dir)
    try:
        for _ in range(100):                 # the shell has started its sleep
            if len(host.group_members(p.pid)) == 2:
                break
            import time
            time.sleep(0.05)
        state = host.snapshot(kernel)
        state.pid, state.script_pgid, state.script_dir = 4242, p.pid, str(run_dir)
        (kernel / host.STATE).parent.mkdir(parents=True, exist_ok=True)
        (kernel / host.STATE).write_text(json.dumps(state.to_json()))
        with host.session(kernel, umount=lambda p: None) as s:
            assert f"process group {p.pid}, 2 process(es)) was still running: ended" \
                in s.recovered, s.recovered
        p.wait(timeout=5)
        assert host.group_members(p.pid) == []
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_a_reused_process_group_id_is_left_alone(tmp_path_factory):
    p = _leftover(tmp_path_factory.mktemp("someone-else"))
    try:
        assert host.end_leftover(p.pid, str(tmp_path_factory.mktemp("run"))) == ""
        assert p.poll() is None
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert host.end_leftover(0, "") == ""


def test_session_saves_the_scripts_process_group(kernel):
    with host.session(kernel, umount=lambda p: None) as s:
        s.started(1234, kernel / "run")
        saved = json.loads((kernel / host.STATE).read_text())
        assert saved["script_pgid"] == 1234 and saved["script_dir"] == str(kernel / "run")
    assert not (kernel / host.STATE).exists()
