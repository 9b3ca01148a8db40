"""sched_ext in the guest (issue: sched_ext side by side): the `scx` kernel
variant boots with sched_ext, the kernel's scx_simple and our scx_idlesteal
load and unload, scx_idlesteal steals with stealing on and not with it off
(at start or switched at run time), keeps every task inside its affinity,
survives CPU hotplug (it restarts with the new topology) and is never
ejected by the sched_ext watchdog; each published peer (idlesteal/peers.py)
loads and unloads; 30 s of hotplug, affinity and taskset churn with message
passing under scx_idlesteal.  One 2x2x2 boot runs all of that; one more
boot runs a small side-by-side benchmark (docs/scx.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from idlesteal import image, peers, scx, sidebyside, suite, topology, vm

from .conftest import kernel_for, no_build

pytestmark = pytest.mark.guest

HB = "hackbench -g 4 -l 100 >/dev/null"

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
section switch
scx_start /tmp/switch.log scx_idlesteal
{HB}
kill -USR1 $scx_pid
while ! grep -q "stealing off" /tmp/switch.log; do sleep 0.1; done
sleep 1.5
echo "MARK"
{HB}
scx_stop
cat /tmp/switch.log
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
"""

# Churn under scx_idlesteal for CHURN_S seconds: two hackbench loops, random
# CPU hotplug (never cpu0, at most 3 offline; each change restarts it),
# affinity_check (threads changing their own masks) and taskset on running
# hackbench tasks; then every CPU back online, the scheduler back in charge.
CHURN_S = 30
CHURN = f"""
section churn
scx_start /tmp/churn.log scx_idlesteal
end=$(( $(date +%s) + {CHURN_S} ))
hb_loop() {{
    n=0; bad=0
    while [ $(date +%s) -lt $end ]; do
        if hackbench -g 1 -f 6 -l 40 >/dev/null 2>&1; then n=$((n + 1)); else bad=$((bad + 1)); fi
    done
    echo "hackbench runs=$n fails=$bad"
}}
hb_loop > /tmp/hb1.cnt &
pids=$!
hb_loop > /tmp/hb2.cnt &
pids="$pids $!"
affinity_check -t 6 -c 20 -d {CHURN_S - 5} > /tmp/aff.out 2>&1 &
pids="$pids $!"
(ok=0
 while [ $(date +%s) -lt $end ]; do
    for pid in $(pidof hackbench | cut -d' ' -f1-4); do
        taskset -p $(printf %x $(( RANDOM % 255 + 1 ))) $pid >/dev/null 2>&1 && ok=$((ok + 1))
    done
    sleep 0.3
 done
 echo "taskset ok=$ok") > /tmp/ts.cnt &
pids="$pids $!"
(ops=0; off=0
 while [ $(date +%s) -lt $end ]; do
    c=$(( RANDOM % 7 + 1 )); f=/sys/devices/system/cpu/cpu$c/online
    if [ "$(cat $f)" = 1 ]; then
        [ $off -lt 3 ] && echo 0 > $f 2>/dev/null && off=$((off + 1)) && ops=$((ops + 1))
    else
        echo 1 > $f 2>/dev/null && off=$((off - 1)) && ops=$((ops + 1))
    fi
    sleep 1
 done
 echo "hotplug ops=$ops") > /tmp/hp.cnt &
pids="$pids $!"
for p in $pids; do wait $p || true; done
for c in 1 2 3 4 5 6 7; do echo 1 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null || true; done
echo "online $(cat /sys/devices/system/cpu/online)"
cat /tmp/hb1.cnt /tmp/hb2.cnt /tmp/ts.cnt /tmp/hp.cnt
grep '^RESULT' /tmp/aff.out || tail -3 /tmp/aff.out
scx_wait enabled
scx_stop
grep -E '^(final |scx_idlesteal: restarting)' /tmp/churn.log
"""

PEERS = "".join(f"""
section {name}
scx_start /tmp/{name}.log {name}
{HB}
scx_stop
""" for name in peers.PEERS)


@dataclass
class ScxGuest:
    kernel: Path
    initrd: Path          # every scheduler of ours and every peer in /usr/bin


@pytest.fixture(scope="module")
def scx_guest() -> ScxGuest:
    kernel = kernel_for(scx.VARIANT)
    if no_build():
        bins = {n: scx.binary(n) for n in scx.SCHEDULERS}
        bins.update({n: peers.binary(n) for n in peers.PEERS})
    else:
        bins = scx.build_schedulers()
        bins.update(peers.ensure())
    return ScxGuest(kernel, image.build_base(files=scx.image_files(bins)))


@pytest.fixture(scope="module")
def scx_run(scx_guest: ScxGuest) -> vm.RunResult:
    preset = topology.get("2x2x2")
    res = vm.run_script(SCRIPT + PEERS + CHURN, preset, scx_guest.kernel, scx_guest.initrd,
                        timeout=900, name="scx")
    topology.verify(preset, res.sections["topology"])
    return res


def lines(res: vm.RunResult, section: str) -> list[str]:
    return [l.strip() for l in res.sections[section].splitlines() if l.strip()]


def clean_cycle(res: vm.RunResult, section: str, name: str) -> None:
    got = lines(res, section)
    assert f"ops {name}" in got, got
    assert "rc 0" in got, got
    assert "state disabled" in got, got


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
    clean_cycle(scx_run, "hotplug", "idlesteal")
    text = scx_run.sections["hotplug"]
    assert "restarting (topology changed)" in text
    assert int(scx.final_stats(text)["steals"]) > 0


@pytest.mark.parametrize("name", list(peers.PEERS))
def test_peer_loads_and_unloads(scx_run, name):
    got = lines(scx_run, name)
    ops = next((l.split()[1] for l in got if l.startswith("ops ")), "")
    assert sidebyside.ops_matches(ops, peers.OPS_NAMES[name]), got
    assert "rc 0" in got and "state disabled" in got, got


def test_churn_under_scx_idlesteal(scx_run):
    """Hotplug, affinity and taskset churn with message passing for CHURN_S
    seconds: every run completes, no task outside its mask, it restarts on
    every hotplug and still steals, and unloads cleanly."""
    got = lines(scx_run, "churn")
    clean_cycle(scx_run, "churn", "idlesteal")
    assert "online 0-7" in got, got
    counts = {w.split()[0]: dict(kv.split("=") for kv in w.split()[1:])
              for w in got if w.split()[0] in ("hackbench", "taskset", "hotplug")}
    hb = [l for l in got if l.startswith("hackbench ")]
    assert len(hb) == 2 and all("fails=0" in l for l in hb), got
    assert sum(int(l.split("runs=")[1].split()[0]) for l in hb) >= 4, got
    assert int(counts["hotplug"]["ops"]) >= 5 and int(counts["taskset"]["ok"]) > 0, got
    aff = [l for l in got if l.startswith("RESULT ")]
    assert aff, got
    r = json.loads(aff[0][len("RESULT "):])
    assert r["violations"] == 0 and r["checks"] > 0, r
    text = scx_run.sections["churn"]
    finals = [r for r in scx.parse_stats(text) if r["kind"] == "final"]
    assert len(finals) >= 2, text                      # restarted at least once
    assert sum(int(r["steals"]) for r in finals) > 0, finals


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


def test_no_scheduler_ejected_and_no_kernel_error(scx_run):
    console = scx_run.console.read_text(errors="replace")
    assert not scx.EJECTED.search(console), scx.EJECTED.search(console)
    assert "runnable task stall" not in console
