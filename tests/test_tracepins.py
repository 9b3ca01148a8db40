"""Tracepoints pinned at boot (idlesteal/guest/tracepins.py, docs/tcg.md)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from idlesteal.guest import image, topology, tracepins, vm
from idlesteal.runs import host


def test_two_instances_each_with_every_event_and_tracing_off():
    words = tracepins.cmdline()
    assert words[0] == "trace_buf_size=4096"
    inst = [w for w in words if w.startswith("trace_instance=")]
    assert len(inst) == 2 and len(set(inst)) == 2
    for w in inst:
        name, events = w[len("trace_instance="):].split(",", 1)
        assert name.endswith("^traceoff") and name.split("^")[0] in tracepins.INSTANCES
        assert events.split(",") == [f"sched:{e}" for e in tracepins.EVENTS]


def test_the_pinned_events_are_the_ones_the_harness_turns_on():
    helpers = image.HELPERS
    body = helpers[helpers.index("trace_setup() {"):]
    body = body[:body.index("\n}\n")]
    m = re.search(r"for _e in ([^;]*);", body.replace("\\\n", " "))
    assert m, body
    assert tuple(m.group(1).split()) == tracepins.EVENTS == host.EVENTS


@pytest.mark.parametrize("script, traces", [
    ("section meta\ntrace_setup 4096\ntrace_on\n", True),
    ("x=1\n    trace_setup $KB\n", True),
    ("section trace_setup\nif [ -d /sys ]; then :; fi\n", True),     # guest/stress.sh
    ("section meta\nhackbench -g 4\n", False),
    ("# trace_setup is not called here\n", False),
    ("section trace_setup_x\n", False),
    ("echo trace_setup 1\n", False),
])
def test_a_boot_is_pinned_when_its_script_sets_tracing_up(script, traces):
    assert tracepins.wanted(script) is traces
    words = tracepins.with_pins(script, ["foo=1"])
    assert words == (["foo=1", *tracepins.cmdline()] if traces else ["foo=1"])


def test_pins_given_by_the_caller_are_not_doubled():
    given = ["a=1", *tracepins.cmdline()]
    assert tracepins.with_pins("trace_setup 1\n", given) == given


def test_a_tracing_run_boots_with_the_pins_and_one_that_does_not_without(tmp_path: Path,
                                                                          monkeypatch):
    monkeypatch.setattr(vm.paths, "runs_dir", lambda: tmp_path / "runs")
    kernel, base = tmp_path / "bzImage.built", tmp_path / "base.cpio.gz"
    kernel.write_bytes(b"kernel")
    base.write_bytes(b"base archive")
    cmds = {}
    for name, script in (("traced", "trace_setup 4096\n"), ("plain", "true\n")):
        with vm.stage(), pytest.raises(vm.Staged) as st:
            vm.run_script(script, topology.get("2x2x2"), kernel, base, name=name,
                          cmdline=["foo=1"])
        cmd = shlex.split((st.value.run_dir / "qemu.cmd").read_text())
        cmds[name] = cmd[cmd.index("-append") + 1].split()
    assert cmds["traced"][-3:] == tracepins.cmdline() and "foo=1" in cmds["traced"]
    assert not any(w.startswith(("trace_instance=", "trace_buf_size="))
                   for w in cmds["plain"]) and "foo=1" in cmds["plain"]
