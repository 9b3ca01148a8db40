"""sched_ext in the guest: the `scx` kernel
variant boots with sched_ext, the kernel's scx_simple and our scx_idlesteal
load and unload, scx_idlesteal steals with stealing on and not with it off
(at start or switched at run time), kicks no idle CPU with -k, keeps every task inside its affinity,
stays loaded through CPU hotplug (ops.cpu_online/offline), serves its
scx_stats metrics (--stats, --monitor), runs as its systemd unit would
(the unit's command with the packaged options: no counters line every
second; SIGTERM unloads it, exit 0) and is never
ejected by the sched_ext watchdog; each published peer (idlesteal/scx/peers.py)
loads and unloads.  One 2x2x2 boot runs all of that; one more runs 60 s of
the stress suite under scx_idlesteal, one more a small side-by-side
benchmark (docs/scx.md).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from idlesteal.guest import image, topology, vm
from idlesteal.scx import peers, own as scx
from idlesteal.runs import sidebyside, stress, suite

from .conftest import kernel_for, no_build

pytestmark = pytest.mark.guest

HB = "hackbench -g 4 -l 100 >/dev/null"


def peers_under_test() -> tuple[str, ...]:
    """IDLESTEAL_TEST_PEERS: the peers this boot loads, comma-separated
    (`make test`: scx_p2dq, which the side by side below needs too); unset,
    empty or "all": every peer (`make test-full`)."""
    env = os.environ.get("IDLESTEAL_TEST_PEERS", "").strip()
    if env in ("", "all"):
        return tuple(peers.PEERS)
    names = tuple(n.strip() for n in env.split(",") if n.strip())
    peers.check_names(names)
    return names


TEST_PEERS = peers_under_test()
PACKAGING = scx.OWN_DIR / "packaging"
SERVICE_OPTIONS = "/etc/default/scx_idlesteal"
# the image's copy of the packaged options file (the service section reads it)
SERVICE_FILES = [f"{PACKAGING / 'scx_idlesteal.default'}:{SERVICE_OPTIONS}"]


def service_command() -> str:
    """The ExecStart= of scx_idlesteal.service as `make install-scx` writes
    it (PREFIX /usr); systemd splits an unquoted $VAR into words, as sh does."""
    for line in (PACKAGING / "scx_idlesteal.service.in").read_text().splitlines():
        if line.startswith("ExecStart="):
            return line[len("ExecStart="):].replace("@BINDIR@", "/usr/bin")
    raise AssertionError("no ExecStart= in scx_idlesteal.service.in")


SCRIPT = f"""
set -e
section topology
{topology.GUEST_SNIPPET.strip()}
section before
echo "state $(cat {scx.STATE})"
section simple
scx_start /tmp/simple.log scx_simple
{HB}
scx_stop
section on
scx_start /tmp/on.log scx_idlesteal
{HB}
affinity_check -t 16 -d 5 -c 20
scx_stop
cat /tmp/on.log
section off
scx_start /tmp/off.log scx_idlesteal -o
{HB}
scx_stop
cat /tmp/off.log
section nokick
scx_start /tmp/nokick.log scx_idlesteal -k
{HB}
scx_stop
cat /tmp/nokick.log
section switch
scx_start /tmp/switch.log scx_idlesteal --counters
{HB}
kill -USR1 $scx_pid
while ! grep -q "stealing off" /tmp/switch.log; do sleep 0.1; done
sleep 1.5
echo "MARK"
{HB}
scx_stop
cat /tmp/switch.log
section stats
scx_start /tmp/stats.log scx_idlesteal --stats 0.5
scx_idlesteal --monitor 0.5 > /tmp/monitor.out 2>&1 &
mon=$!
{HB}
sleep 1.5
kill -INT $mon; wait $mon || true
scx_stop
cat /tmp/stats.log
echo "MONITOR"
cat /tmp/monitor.out
section hotplug
scx_start /tmp/hotplug.log scx_idlesteal
(while :; do hackbench -g 2 -l 50 >/dev/null; done) &
hb=$!
for cpu in 3 6 3; do
    echo 0 > /sys/devices/system/cpu/cpu$cpu/online; sleep 1
    echo 1 > /sys/devices/system/cpu/cpu$cpu/online; sleep 1
done
kill $hb; wait $hb || true
while pidof hackbench >/dev/null; do sleep 0.5; done
scx_wait enabled
{HB}
scx_stop
cat /tmp/hotplug.log
section service
# what scx_idlesteal.service runs: its options file, its command, SIGTERM
. {SERVICE_OPTIONS}
{service_command()} > /tmp/service.log 2>&1 &
scx_pid=$!
scx_wait enabled
echo "ops $(cat {scx.OPS})"
{HB}
sleep 2.5
kill -TERM $scx_pid
_rc=0; wait $scx_pid || _rc=$?
echo "rc $_rc"
scx_wait disabled
echo "state $(cat {scx.STATE})"
cat /tmp/service.log
"""

STRESS_S = 60

PEERS = "".join(f"""
section {name}
scx_start /tmp/{name}.log {name}
{HB}
scx_stop
""" for name in TEST_PEERS)


@dataclass
class ScxGuest:
    kernel: Path
    initrd: Path          # every scheduler of ours and every peer in /usr/bin


@pytest.fixture(scope="module")
def scx_guest() -> ScxGuest:
    kernel = kernel_for(scx.VARIANT)
    if no_build():
        bins = {n: scx.binary(n) for n in scx.SCHEDULERS}
        bins.update({n: peers.binary(n) for n in TEST_PEERS})
    else:
        bins = scx.build_schedulers()
        bins.update(peers.ensure(TEST_PEERS))
    return ScxGuest(kernel, image.build_base(files=scx.image_files(bins) + SERVICE_FILES))


@pytest.fixture(scope="module")
def scx_run(scx_guest: ScxGuest) -> vm.RunResult:
    preset = topology.get("2x2x2")
    res = vm.run_script(SCRIPT + PEERS, preset, scx_guest.kernel, scx_guest.initrd,
                        timeout=900, name="scx")
    topology.verify(preset, res.sections["topology"])
    return res


def lines(res: vm.RunResult, section: str) -> list[str]:
    return [l.strip() for l in res.sections[section].splitlines() if l.strip()]


def clean_cycle(res: vm.RunResult, section: str, name: str) -> None:
    got = lines(res, section)
    ops = next((l.split()[1] for l in got if l.startswith("ops ") and len(l.split()) == 2), "")
    # the Rust schedulers (ours too) register as NAME_VERSION_TARGET
    assert sidebyside.ops_matches(ops, name), got
    assert "rc 0" in got, got
    assert "state disabled" in got, got


_METRICS = re.compile(r"^\[scx_idlesteal\] steals (\d+) failed \d+ .* stealing (on|off)$")


def test_stats_and_monitor(scx_run):
    """scx_stats (docs/scx.md): --stats prints the metrics beside the
    scheduler, --monitor from another process while it runs; both see the
    steals hackbench makes (each line is the change since the last)."""
    clean_cycle(scx_run, "stats", "idlesteal")
    got = lines(scx_run, "stats")
    cut = got.index("MONITOR")
    for part in (got[:cut], got[cut + 1:]):
        rows = [m for m in map(_METRICS.match, part) if m]
        assert rows, part
        assert any(int(m.group(1)) > 0 for m in rows), part
        assert all(m.group(2) == "on" for m in rows), part


def test_runs_as_its_service_would(scx_run):
    """The unit's command with the packaged options (tools/scx_idlesteal/
    packaging/): in charge, no counters line in the journal but the
    final one, SIGTERM (systemd's stop) unloads it with exit status 0."""
    clean_cycle(scx_run, "service", "idlesteal")
    rows = scx.parse_stats(scx_run.sections["service"])
    assert [r["kind"] for r in rows] == ["final"], rows   # 2.5 s and more: no "stats" line
    assert int(rows[0]["steals"]) > 0, rows


def test_sched_ext_present_and_idle_at_boot(scx_run):
    assert lines(scx_run, "before") == ["state disabled"]


def test_kernel_example_loads_and_unloads(scx_run):
    clean_cycle(scx_run, "simple", "simple")


def test_idlesteal_steals_with_stealing_on(scx_run):
    clean_cycle(scx_run, "on", "idlesteal")
    final = scx.final_stats(scx_run.sections["on"])
    assert final["steal"] == "on"
    assert int(final["steals"]) > 0, final
    assert int(final["queued"]) > 0


def test_idlesteal_affinity_respected(scx_run):
    rows = [l for l in lines(scx_run, "on") if l.startswith("RESULT ")]
    assert rows, scx_run.sections["on"]
    r = json.loads(rows[-1][len("RESULT "):])
    assert r["violations"] == 0 and r["checks"] > 0 and r["mask_changes"] > 20


def test_idlesteal_no_steals_with_stealing_off(scx_run):
    clean_cycle(scx_run, "off", "idlesteal")
    final = scx.final_stats(scx_run.sections["off"])
    assert final["steal"] == "off"
    assert final["steals"] == 0 and final["failed"] == 0, final
    assert int(final["queued"]) > 0


def test_idlesteal_arrival_kick_only_without_k(scx_run):
    """-k (scx_idlesteal-nokick of side-by-side) wakes no idle CPU for a
    queued task, neither in the LLC nor elsewhere, and still steals at idle
    entry; the default kicks under the same load."""
    clean_cycle(scx_run, "nokick", "idlesteal")
    assert "no arrival kick" in scx_run.sections["nokick"]
    final = scx.final_stats(scx_run.sections["nokick"])
    assert final["steal"] == "on"
    assert int(final["kicks"]) == 0 and int(final["remote_idle"]) == 0, final
    assert int(final["steals"]) > 0 and int(final["queued"]) > 0, final
    on = scx.final_stats(scx_run.sections["on"])
    assert int(on["kicks"]) > 0, on


def test_idlesteal_run_time_switch(scx_run):
    clean_cycle(scx_run, "switch", "idlesteal")
    text = scx_run.sections["switch"]
    rows = scx.parse_stats(text)
    off = [r for r in rows if r["kind"] == "stats" and r["steal"] == "off"]
    assert off, text
    at_switch, final = off[0], scx.final_stats(text)
    assert int(at_switch["steals"]) > 0          # it stole before the switch
    assert final["steal"] == "off"
    assert final["steals"] == at_switch["steals"], (at_switch, final)


def test_idlesteal_survives_hotplug(scx_run):
    """Three CPUs go offline and come back under load: the scheduler sees
    each of the six changes (ops.cpu_offline/online, counter `hotplug`),
    stays loaded without a restart, and the loader's tables end with every
    CPU online.  The loader polls the online mask every 100 ms, so an
    offline and online a second apart that it did not run between leave
    no line of their own (seen once in a loaded guest): the lines are not
    counted one per change."""
    clean_cycle(scx_run, "hotplug", "idlesteal")
    text = scx_run.sections["hotplug"]
    assert "restarting" not in text          # ops.cpu_online/offline: no restart
    final = scx.final_stats(text)
    assert int(final["hotplug"]) >= 6, text[-2000:]
    moves = [l.strip() for l in text.splitlines() if "hotplug: " in l]
    assert len(moves) >= 2 and moves[-1].endswith("online 0-7"), text[-2000:]
    assert int(final["steals"]) > 0


@pytest.mark.parametrize("name", list(TEST_PEERS))
def test_peer_loads_and_unloads(scx_run, name):
    got = lines(scx_run, name)
    ops = next((l.split()[1] for l in got if l.startswith("ops ")), "")
    assert sidebyside.ops_matches(ops, peers.OPS_NAMES[name]), got
    assert "rc 0" in got and "state disabled" in got, got


def test_stress_under_scx_idlesteal(scx_guest, tmp_path):
    """The stress suite (docs/stress.md: message passing, CPU hotplug,
    cpuset partitions, affinity and taskset churn, a throttled cgroup) for
    60 s with scx_idlesteal in charge: passes (no failed or lost run, no
    affinity violation, clean unload), stays loaded through hotplug and steals, and
    sched_ext never ejects it (stress.run() fails the run if it does)."""
    s, _ = stress.run("2x2x2", STRESS_S, scx_guest.kernel, scx_guest.initrd,
                      variant=scx.VARIANT, outdir=tmp_path, scx_loader=("scx_idlesteal",))
    assert s["passed"], s["failures"]
    c = s["counts"]
    assert c["scx_restarts"] == 0 and c["hotplug_ops"] > 0 and c["affinity_violations"] == 0
    assert c["steals"] >= s["minimums"]["steals"]


def test_side_by_side_end_to_end(scx_guest, tmp_path):
    """The bench-scx path on a small scale: EEVDF, scx_idlesteal and one peer
    on 1x1x2, 2 repetitions; every run under the scheduler it is filed under."""
    spec = sidebyside.Spec("1x1x2", suite.parse("1x1x2 hackbench 1 20"),
                           sidebyside.contenders("eevdf,scx_idlesteal,scx_p2dq"), 2)
    out = sidebyside.run(spec, scx_guest.kernel, scx.VARIANT, tmp_path)
    data = json.loads(out["json"].read_text())
    assert {m["contender"] for m in data["measurements"]} == {"eevdf", "scx_idlesteal",
                                                               "scx_p2dq"}
    assert len(data["measurements"]) == 3 * 2
    assert data["meta"]["peers"] == {"scx_p2dq": peers.PEERS["scx_p2dq"]}
    assert len(data["steals"]["scx_idlesteal"]) == 2
    assert "hackbench groups 1" in out["table"]
    assert out["png"] == tmp_path / "1x1x2.png" and out["png"].stat().st_size > 0
    # the wasted-CPU measure under every scheduler (a DSQ wait is a wait)
    assert all(m["waste"] is not None and m["waste"]["events"] > 0
               for m in data["measurements"])
    assert "wasted LLC %" in out["table"]


def test_no_scheduler_ejected_and_no_kernel_error(scx_run):
    console = scx_run.console.read_text(errors="replace")
    assert not scx.EJECTED.search(console), scx.EJECTED.search(console)
    assert "runnable task stall" not in console
