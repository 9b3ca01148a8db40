"""scx_idlesteal on the other kernel bases (docs/ports.md): the `scx` variant of
a port (configs/variants.<base>: guest.config + scx.config, no
steal.config; on Debian's source as fetched, or on 7.3 the series' tree
with STEAL off at boot), scx_simple built from that base's own
tools/sched_ext (its headers, libbpf and bpftool) and scx_idlesteal built
by cargo as for every base (scx_cargo's headers map the kfunc names to the
running kernel's at load time), and the guest part of tests/guest/test_scx.py run there, in one 2x2x2 boot:
sched_ext idle at boot, scx_simple loads and unloads, scx_idlesteal steals
under hackbench with stealing on and not with it off, keeps every task in
its mask (affinity_check), switches at run time, stays loaded through CPU
hotplug, runs as its systemd unit would, gives the CPU up to a waiting task
at sched_yield(), and is never ejected; and veristat
(the base tree's) passes every program of the BPF object, as in
test_scx_correctness.py (but the ones the loader attaches itself where the
kernel has their ops member: on 6.12 it does not load them).  The peers and the stress and side-by-side
parts of test_scx.py are not run here.

6.12 passes migration-disabled tasks to ops.enqueue() (later kernels only
with SCX_OPS_ENQ_MIGRATION_DISABLED, the loader's -m), and moving one to
another CPU is an error there that ejects the scheduler ("cannot move
migration disabled"): not on the console; -m says the flag is not there.

6.12.117 itself warns once at the first CPU offline with any sched_ext
scheduler in charge (the kernel's scx_simple too; not under EEVDF):
"WARNING: ... kernel/sched/deadline.c:265 task_non_contending", the fair
server's running bandwidth underflowing in dl_server_stop() from
sched_cpu_dying().  That one line is tolerated on 6.12 (KNOWN_BASE_WARNINGS,
docs/ports.md); any other kernel error fails the boot as everywhere else.

Marker `ports`: `make test-ports` (`make test BASE=6.12`), not the default
`make test`.  The bases run are IDLESTEAL_BASE's when it names one other
than the default, else PORT_BASES.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

from idlesteal import bases
from idlesteal.guest import image, topology, vm
from idlesteal.scx import own as scx

from .conftest import kernel_for, no_build
# The checks of the default base's scx boot, run against this module's
# scx_run (pytest collects what a module imports under a test_ name).
from .test_scx import (SCRIPT, SERVICE_FILES, clean_cycle, lines,  # noqa: F401
                       test_idlesteal_affinity_respected, test_runs_as_its_service_would,
                       test_idlesteal_no_steals_with_stealing_off, test_idlesteal_run_time_switch,
                       test_idlesteal_steals_with_stealing_on, test_idlesteal_survives_hotplug,
                       test_kernel_example_loads_and_unloads,
                       test_no_scheduler_ejected_and_no_kernel_error,
                       test_sched_ext_present_and_idle_at_boot, test_stats_and_monitor)
from .test_scx_correctness import (HELPERS, VERISTAT_OBJ, YIELD,  # noqa: F401
                                   test_veristat_passes_every_program,
                                   test_yield_gives_the_cpu_to_a_waiting_task, veristat_files)

pytestmark = [pytest.mark.guest, pytest.mark.ports]

PORT_BASES = ("6.12", "7.3")

# Kernel warnings of a base's own code that its sched_ext triggers whatever
# the scheduler (reproduced with scx_simple), per base.
KNOWN_BASE_WARNINGS = {
    "6.12": re.compile(r"WARNING: CPU: \d+ PID: \d+ at \S*kernel/sched/deadline\.c:265 "
                       r"(?:task_non_contending|inactive_task_timer)\+"),
}

MIGDIS = f"""
section migdis
scx_start /tmp/migdis.log scx_idlesteal -m
hackbench -g 4 -l 100 >/dev/null
scx_stop
cat /tmp/migdis.log

section offline_queued
# Twelve CPU-bound tasks allowed on CPUs 2 and 3 only (mask c): about five
# wait in each CPU's queue; CPU 3 goes offline with its queue full.
scx_start /tmp/offq.log scx_idlesteal
P=""
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do taskset c sh -c 'while :; do :; done' & P="$P $!"; done
sleep 2
echo 0 > /sys/devices/system/cpu/cpu3/online && echo "cpu3 offline"
sleep 7
for p in $P; do set -- $(cut -d' ' -f14 /proc/$p/stat); eval "u0_$p=$1"; done
sleep 3
for p in $P; do set -- $(cut -d' ' -f14 /proc/$p/stat); eval 'u0=$u0_'$p; echo "spinner $p ticks $(($1 - u0))"; done
echo "sched_ext $(cat /sys/kernel/sched_ext/state)"
kill $P; wait $P 2>/dev/null || true
echo 1 > /sys/devices/system/cpu/cpu3/online
scx_stop
cat /tmp/offq.log

section veristat
veristat -o csv -e file,prog,verdict,insns,states,duration {VERISTAT_OBJ} 2>&1 || echo "veristat rc $?"
"""


def bases_under_test() -> list[str]:
    env = os.environ.get(bases.ENV)
    if env and env != bases.DEFAULT:
        return [env]
    return list(PORT_BASES)


@pytest.fixture(scope="module", params=bases_under_test())
def port_base(request) -> bases.Base:
    return bases.get(request.param)


@pytest.fixture(scope="module")
def scx_run(port_base: bases.Base) -> Iterator[vm.RunResult]:
    """Build (unless IDLESTEAL_TEST_NO_BUILD) and boot the base's scx kernel
    with its schedulers; the base is selected only while this runs."""
    old = os.environ.get(bases.ENV)
    bases.select(port_base.name)
    try:
        kernel = kernel_for(scx.VARIANT)
        names = scx.SCHEDULERS
        bins = ({n: scx.binary(n) for n in names} if no_build()
                else scx.build_schedulers(names=names))
        initrd = image.build_base(files=scx.image_files(bins) + veristat_files()
                                  + SERVICE_FILES)
        preset = topology.get("2x2x2")
        res = vm.run_script(SCRIPT + MIGDIS + HELPERS + YIELD, preset, kernel, initrd, timeout=900,
                            name=f"scx-{port_base.name}",
                            tolerate=KNOWN_BASE_WARNINGS.get(port_base.name))
        topology.verify(preset, res.sections["topology"])
    finally:
        if old is None:
            os.environ.pop(bases.ENV, None)
        else:
            os.environ[bases.ENV] = old
    yield res


@pytest.fixture(scope="module")
def run(scx_run: vm.RunResult) -> vm.RunResult:
    """test_scx_correctness.py's name for the boot (its veristat check)."""
    return scx_run


def test_the_kernel_is_the_bases(scx_run, port_base):
    """The guest ran the base's own kernel (6.12.117 for linux-source-6.12
    6.12.117-1), not the default base's."""
    upstream = port_base.version.rsplit("-", 1)[0]
    console = scx_run.console.read_text(errors="replace")
    # "6.12.117+": the tree is a git tree (LOCALVERSION_AUTO)
    assert re.search(rf"Linux version {re.escape(upstream)}(?![0-9.])", console), console[:2000]


def test_migration_disabled_tasks_never_moved(scx_run):
    """Every steal, pull and fallback run of the boot skipped the
    migration-disabled tasks: sched_ext never ejected the scheduler for
    moving one (6.12: "SCX_DSQ_LOCAL[_ON] cannot move migration disabled")."""
    console = scx_run.console.read_text(errors="replace")
    assert "cannot move migration disabled" not in console
    for section in ("on", "off", "switch", "hotplug", "migdis"):
        final = scx.final_stats(scx_run.sections[section])
        assert int(final["migdis"]) >= 0, final


def test_cpu_offline_with_tasks_queued_there(scx_run):
    """A CPU taken offline with tasks in its queue: its runqueue's tasks are
    queued again by the kernel before ops.cpu_offline() (rq_offline_scx()
    re-enqueues them to the local DSQ, and balance_push() moves them off;
    6.12.117 does it as 7.2 does), so none is stranded there.  Ten seconds
    after the offline, past the watchdog's 5 s, the scheduler is still in
    charge, was never ejected, and each of the twelve tasks that were on
    CPUs 2 and 3 ran in the last 3 s."""
    text = scx_run.sections["offline_queued"]
    clean_cycle(scx_run, "offline_queued", "idlesteal")
    got = lines(scx_run, "offline_queued")
    assert "cpu3 offline" in got and "sched_ext enabled" in got, got
    ticks = [int(l.split()[-1]) for l in got if l.startswith("spinner ")]
    assert len(ticks) == 12 and min(ticks) > 0, got
    exits = [l for l in got if l.startswith("EXIT")]
    assert exits == ["EXIT: unregistered from user space"], text[-2000:]
    assert "restarting" not in text, text[-2000:]


def test_enqueue_migration_disabled_switch(scx_run):
    clean_cycle(scx_run, "migdis", "idlesteal")
    text = scx_run.sections["migdis"]
    assert "enqueues migration-disabled tasks" in text
    assert int(scx.final_stats(text)["steals"]) > 0
