"""sched_ext in the guest (issue: sched_ext side by side): the `scx` kernel
variant boots with sched_ext, the kernel's scx_simple and our scx_idlesteal
load and unload, scx_idlesteal steals with stealing on and not with it off
(at start or switched at run time), keeps every task inside its affinity,
survives CPU hotplug (it restarts with the new topology) and is never
ejected by the sched_ext watchdog.

One 2x2x2 boot runs everything (docs/scx.md).
"""
from __future__ import annotations

import json
import os
import re

import pytest

from idlesteal import build, image, scx, topology, tree, vm

pytestmark = pytest.mark.guest

WAIT = f"""
scx_wait() {{
    i=0
    while [ "$(cat {scx.STATE})" != "$1" ]; do
        i=$((i + 1)); [ $i -lt 300 ] || {{ echo "timeout waiting for state $1"; return 1; }}
        sleep 0.1
    done
}}
# start LOG PROGRAM ARGS...: run a scheduler in the background until it is in charge
start() {{
    log=$1; shift
    "$@" > $log 2>&1 &
    pid=$!
    scx_wait enabled
    echo "ops $(cat {scx.OPS})"
}}
# stop: SIGINT, wait for the loader, sched_ext back to disabled
stop() {{
    kill -INT $pid
    rc=0; wait $pid || rc=$?
    echo "rc $rc"
    scx_wait disabled
    echo "state $(cat {scx.STATE})"
}}
"""

HB = "hackbench -g 4 -l 100 >/dev/null"

SCRIPT = f"""
set -e
{WAIT}
section topology
{topology.GUEST_SNIPPET.strip()}
section before
echo "state $(cat {scx.STATE})"
section simple
start /tmp/simple.log scx_simple
{HB}
stop
section on
start /tmp/on.log scx_idlesteal
{HB}
affinity_check -t 16 -d 5 -c 20
stop
cat /tmp/on.log
section off
start /tmp/off.log scx_idlesteal -o
{HB}
stop
cat /tmp/off.log
section switch
start /tmp/switch.log scx_idlesteal
{HB}
kill -USR1 $pid
while ! grep -q "stealing off" /tmp/switch.log; do sleep 0.1; done
sleep 1.5
echo "MARK"
{HB}
stop
cat /tmp/switch.log
section hotplug
start /tmp/hotplug.log scx_idlesteal
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
stop
cat /tmp/hotplug.log
"""

# What sched_ext prints when it ejects a scheduler for an error, the
# watchdog's stall among them (scx_exit_reason()); an unload says
# "unregistered from user space", a hotplug restart "... from the main kernel".
EJECTED = re.compile(r"sched_ext: BPF scheduler \"\w+\" disabled "
                     r"\((runtime error|scx_bpf_error|runnable task stall)\)")


@pytest.fixture(scope="module")
def scx_run() -> vm.RunResult:
    if os.environ.get("IDLESTEAL_TEST_NO_BUILD"):
        kernel = build.bzimage(scx.VARIANT)
        bins = {n: scx.binary(n) for n in scx.SCHEDULERS}
    else:
        tree.prepare()
        kernel = build.build(scx.VARIANT)
        bins = scx.build_schedulers()
    initrd = image.build_base(files=scx.image_files(bins))
    preset = topology.get("2x2x2")
    res = vm.run_script(SCRIPT, preset, kernel, initrd, timeout=900, name="scx")
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


def test_no_scheduler_ejected_and_no_kernel_error(scx_run):
    console = scx_run.console.read_text(errors="replace")
    assert not EJECTED.search(console), EJECTED.search(console)
    assert "runnable task stall" not in console
