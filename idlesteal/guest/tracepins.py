"""Tracepoints pinned at boot, so that enabling trace events patches no code
under multi-threaded TCG (docs/tcg.md, "Tracepoints pinned at boot").

A tracepoint's call site is a static call: to its probe while it has one,
to the iterator while it has none or two and more.  Every 0<->1 and 1<->2
change of its probes rewrites the call with text_poke_bp(), and under
multi-threaded TCG a vCPU can then run a stale translation and die of an
`Oops: int3` (vm.stale_code_trap()).  Two boot instances
(`trace_instance=`, created in start_kernel() before the other CPUs are
up), each with the measure's events on and its tracing off, leave those
call sites on the iterator for good: the wasted-time measure, host mode's
instance, perf and BPF programs on these tracepoints then add and remove
probes above two, which patches nothing.  `trace_buf_size=4096` keeps the
instances' ring buffers at a page a CPU; every user of a ring buffer here
sizes its own (helpers.sh trace_setup, guest/stress.sh).

A boot gets the pins when its script sets up tracing (wanted()); boots
that never trace keep their tracepoints unpinned, so that the speed
comparisons of kernels with and without tracing (docs/waste.md) are not
changed."""
from __future__ import annotations

import re

# The events of the wasted-time measure (helpers.sh trace_setup; host mode
# imports them from here) and guest/stress.sh's: the ones the harness turns on.
EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new",
          "sched_migrate_task", "sched_process_exit")
INSTANCES = ("idlesteal_pin1", "idlesteal_pin2")
BUF_SIZE = "trace_buf_size=4096"

# A script line that sets tracing up: helpers.sh's `trace_setup KB` or the
# section guest/stress.sh opens before it enables its events.
_SETUP_RE = re.compile(r"^[ \t]*(?:trace_setup[ \t]+\S|section[ \t]+trace_setup[ \t]*$)",
                       re.MULTILINE)


def cmdline() -> list[str]:
    """The kernel command line words that pin EVENTS' tracepoints."""
    events = ",".join(f"sched:{e}" for e in EVENTS)
    return [BUF_SIZE, *(f"trace_instance={name}^traceoff,{events}" for name in INSTANCES)]


def wanted(script: str) -> bool:
    """Whether `script` (a guest /run.sh) turns trace events on."""
    return _SETUP_RE.search(script) is not None


def with_pins(script: str, words: list[str]) -> list[str]:
    """`words` with the pins added when the script traces and they are not
    there already."""
    if not wanted(script) or any(w.startswith("trace_instance=") for w in words):
        return words
    return [*words, *cmdline()]
