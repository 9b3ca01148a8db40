"""Stress suite: the run itself, and a kept run judged again.

`run()` boots the debug kernel with the stress script (retrying once a boot
whose kernel errors all came before SMP bring-up), evaluates what the guest
printed and the console, and writes the JSON summary
(results/stress/<stamp>-<preset>-<S>s.json); run_meta() is what it keeps in
the run directory, for reevaluate() (`idlesteal collect`) to judge the kept
run again with the current rules.
"""
from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

from ...guest import image, topology, vm
from ...measure import kcsan
from ...scx import own as scx
from ...util import log
from .console import errors_before_smp, known_warnings, tolerated
from .results import summary, write_summary
from .scenario import (BOOT_TIMEOUT, CMDLINE, VARIANT, check_preset, params_for, script,
                       series_kernel, thresholds, timeout_for)
from .verdict import Verdict, evaluate

def run(preset_name: str, seconds: int, kernel: Path, initrd: Path, *,
        variant: str = VARIANT, outdir: Path | None = None,
        append: list[str] | None = None, kcsan_races: bool = False,
        scx_loader: tuple[str, ...] = (), steal: str = "toggle") -> tuple[dict, Path]:
    """Boot, stress, evaluate; write and return the JSON summary (never
    raises for a failed run: the summary says why).

    kcsan_races: the kernel has KCSAN; its data-race reports are collected
    and sorted (idlesteal/measure/kcsan.py) instead of failing the boot, and the run
    fails if one touches the series.

    scx_loader: a sched_ext loader's argv (in `initrd`, on a kernel with
    sched_ext) in charge during the load; the run also fails if sched_ext
    ejects it (scx.EJECTED: an error or the watchdog's stall)."""
    preset = dataclasses.replace(topology.get(preset_name),
                                 boot_timeout=max(BOOT_TIMEOUT, topology.get(preset_name).boot_timeout))
    check_preset(preset)
    p = params_for(preset, seconds, scx_loader, steal, series_kernel(variant))
    log(f"stress: {preset.name} for {seconds} s on kernel {kernel}"
        + (f" under {shlex.join(scx_loader)}" if scx_loader else "")
        + ("" if p.series else f" (variant {variant}: no series, checks off: "
           f"{', '.join(p.checks_off())})"))
    error = None
    guest: dict = {}
    v = Verdict(minimums=thresholds(seconds))
    uname = ""
    retried: list[dict] = []
    try:
        for attempt in (1, 2):
            try:
                res = vm.run_script(script(p), preset, kernel, initrd, timeout=timeout_for(p),
                                    name="stress", cmdline=[*CMDLINE, *(append or [])],
                                    meta=run_meta(preset.name, seconds, variant, p.steal),
                                    tolerate=tolerated(kcsan_races))
                break
            except vm.GuestKernelError as e:
                early = errors_before_smp(e.console.read_text(errors="replace"))
                if attempt == 2 or not early:
                    raise
                # Kept in the summary and printed; one retry only.
                log(f"stress: kernel error before SMP bring-up (not the series'), booting "
                    f"again: {early[0]}")
                retried.append({"console": str(e.console), "kernel_errors": early[:10]})
        guest = {"run_dir": str(res.run_dir), "console": str(res.console),
                 "boot_seconds": round(res.boot_seconds, 1),
                 "total_seconds": round(res.seconds, 1),
                 "stale_code_retries": [str(d) for d in res.retried]}
        uname = res.sections.get("meta", "").strip()
        try:
            topology.verify(preset, res.sections.get("topology", ""))
        except topology.TopologyError as e:
            v.failures.append(str(e))
        ev = evaluate(res.sections, p)
        ev.failures = v.failures + ev.failures
        v = ev
        known, unknown = known_warnings(res.console.read_text(errors="replace"))
        if known:
            v.details["known_warnings"] = known
        v.failures += unknown
        ejected = scx.EJECTED.search(res.console.read_text(errors="replace"))
        if ejected:
            v.failures.append(f"sched_ext ejected the scheduler: {ejected.group(0)}")
        if kcsan_races:
            races = kcsan.summarize(kcsan.parse(res.console.read_text(errors="replace")))
            v.details["kcsan"] = races
            if races["series"]:
                v.failures.append(f"KCSAN: {sum(races['series'].values())} data-race "
                                  f"report(s) touch the series: {', '.join(races['series'])}")
    except vm.GuestError as e:
        error = f"{type(e).__name__}: {e}"
        guest = {"run_dir": str(e.run_dir), "console": str(e.console)}
        try:
            text = e.console.read_text(errors="replace")
            guest["kernel_errors"] = vm.kernel_errors(text, tolerated(kcsan_races))[:50]
            m = re.search(r"Linux version (\S+)", text)
            uname = m.group(1) if m else ""
            known, unknown = known_warnings(text)
            if known:
                v.details["known_warnings"] = known
            v.failures += unknown
        except OSError:
            pass
        # Whatever the guest managed to print is still worth counting.
        out = e.run_dir / "output.log"
        if out.exists():
            parsed = _parse_partial(out.read_text(errors="replace"))
            if parsed:
                try:
                    part = evaluate(parsed, p)
                    v.counts = part.counts
                except Exception:  # partial output: counts only, best effort
                    pass
    if retried:
        guest["retried_boots"] = retried
    s = summary(preset, p, v, variant=variant, uname=uname, guest=guest, error=error)
    path = write_summary(s, outdir)
    if not s["passed"]:
        # Whole, on stderr: the run directory goes with a CI machine, and a
        # test's assertion message is cut short where its output is not.
        for f in ([error] if error else []) + v.failures:
            log(f"stress: FAILED: {f}")
        if guest.get("run_dir"):
            _log_tail(Path(guest["run_dir"]) / "output.log")
    return s, path


def run_meta(preset_name: str, seconds: int, variant: str, steal: str = "toggle") -> dict:
    """What run() keeps as the run directory's run.json (vm.RUN_META), for
    reevaluate() / `idlesteal collect` (which tells a kernel without the
    series by its variant, series_kernel(), as run() does)."""
    return {"kind": "stress", "preset": preset_name, "seconds": seconds, "variant": variant,
            "steal": steal}


def reevaluate(run_dir: Path, preset_name: str, seconds: int, *, variant: str = VARIANT,
               note: str = "", steal: str = "toggle") -> dict:
    """Judge a kept run (build/runs/<id>/) again with the current rules,
    as run() would have: topology check, evaluate(), and the kernel-error
    check repeated on its console log.  A truncated output (no END marker)
    is judged on what it has and fails.  Raises OSError when output.log or
    console.log cannot be read."""
    preset = topology.get(preset_name)
    p = params_for(preset, seconds, steal=steal, series=series_kernel(variant))
    raw = (run_dir / "output.log").read_text(errors="replace")
    console = (run_dir / "console.log").read_text(errors="replace")
    sections = _parse_partial(raw)
    v = evaluate(sections, p)
    try:
        topology.verify(preset, sections.get("topology", ""))
    except topology.TopologyError as e:
        v.failures.insert(0, str(e))
    errs = vm.kernel_errors(console, tolerated(False))
    known, unknown = known_warnings(console)
    if known:
        v.details["known_warnings"] = known
    v.failures += unknown
    problems = []
    if errs:
        problems.append("kernel reported errors: " + "; ".join(errs[:10]))
    parsed = image.parse_output(raw)
    if parsed is None:
        problems.append("guest output ends without the END marker (truncated)")
    elif parsed.rc != 0:
        problems.append(f"guest script exited with rc={parsed.rc}")
    guest = {"run_dir": str(run_dir), "console": str(run_dir / "console.log"),
             "kernel_errors": errs[:50]}
    m = re.search(r"Linux version (\S+)", console)
    uname = sections.get("meta", "").strip() or (m.group(1) if m else "")
    s = summary(preset, p, v, variant=variant, uname=uname, guest=guest,
                error="; ".join(problems) or None)
    if note:
        s["note"] = note
    return s


def _parse_partial(raw: str) -> dict[str, str]:
    parsed = image.parse_output(raw)
    if parsed is not None:
        return parsed.sections
    if image.BEGIN not in raw:
        return {}
    return image.parse_output(raw + "\n@@IDLESTEAL END rc=99@@\n").sections  # type: ignore[union-attr]


def _log_tail(output: Path, lines: int = 15) -> None:
    """Log the last lines the guest's script printed: where it stopped."""
    try:
        tail = output.read_text(errors="replace").replace("\r", "").splitlines()[-lines:]
    except OSError:
        return
    log(f"stress: the script's last {len(tail)} lines ({output}):")
    for l in tail:
        log(f"  | {l}")
