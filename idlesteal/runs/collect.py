"""Re-parse a kept run directory into results (`idlesteal collect RUN_DIR`),
as `kunit.py parse` does for a saved log.

vm.run_script() keeps build/runs/<id>/ with run.sh, output.log (the
script's output), console.log, qemu.cmd and run.json (vm.RUN_META): what
the run was.  These kinds are known:

    {"kind": "stress", "preset": NAME, "seconds": N, "variant": V, "steal": MODE}
        written by stress.run(); judged again with stress.reevaluate() and
        written with stress.write_summary() (kernel errors on the console,
        a failed or truncated script: a FAIL in the summary).
    {"kind": "bench", "name": NAME, "preset": PRESET, "variant": V,
     "spec": BenchSpec.to_json(), "build": build meta, "qemu": version}
        written by bench.run_ab(); the measurements are parsed again and
        written with report.write() (outdir/<name>.json, .txt, .png).  Kernel
        errors, a failed script or output that does not parse raise.
    {"kind": "host-bench", "name": NAME, "spec": ..., "offer": host.Offer.to_json(),
     "skipped": NOTE, "forced_under_load": BOOL}
        written by `bench --host` (host/sweep.py; no console.log, no qemu.cmd: the
        script ran on the machine itself); measured again with the offer's
        topology and written by host.results() as the run wrote them.  No
        kernel errors are read (there is no guest console), and the report
        says so; the load at the end was not recorded in the run directory.

    {"kind": "sidebyside", "spec": sidebyside.Spec.to_json(), "variant": V,
     "build": build meta, "peers": versions, "scx_idlesteal_sha256": DIGEST}
        written by sidebyside.run() (runs kept before run.json carried the
        last three: the results say "not recorded"); measured again and written
        by sidebyside.finish(), a scheduler the kernel ejected left out as
        the run itself does.

collect() returns a Collected: what to print (.text), the files written
(.paths) and whether the run passed (.passed).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import bench, host, sidebyside, stress
from ..guest import image, topology, vm
from .. import paths
from ..kernel import provenance
from ..report import ab as report
from ..measure import waste
from ..util import HarnessError


class CollectError(HarnessError):
    """A run directory that cannot be collected; the message names the file."""


@dataclass
class Collected:
    """One collected run.  `data`: stress: the summary written (as
    stress.run() returns it); bench: report.write()'s dict ("table", "json",
    "txt", maybe "png")."""
    kind: str                  # "stress", "bench", "host-bench" or "sidebyside"
    passed: bool               # stress: the verdict; bench: always (failures raise)
    text: str                  # the report to print (stress.report() / the table)
    paths: list[Path]          # files written
    data: dict[str, Any] = field(default_factory=dict)
    measurements: int = 0      # bench: measured (non-warm-up) runs


def read_meta(run_dir: Path) -> dict[str, Any]:
    """run_dir/run.json, checked to be a JSON object with a "kind"."""
    path = run_dir / vm.RUN_META
    if not run_dir.is_dir():
        raise CollectError(f"{run_dir}: not a directory (want a kept run, build/runs/<id>/)")
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CollectError(f"{path} is missing: {run_dir} was not written by a run that "
                           f"records what it was (stress, bench, bench --host or "
                           f"side-by-side), so it cannot be collected") from None
    except OSError as e:
        raise CollectError(f"{path}: {e}") from None
    try:
        meta = json.loads(text)
    except ValueError as e:
        raise CollectError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("kind"), str):
        raise CollectError(f"{path}: no \"kind\" (want a JSON object with \"kind\": "
                           f"{' or '.join(map(repr, KINDS))})")
    return meta


def booted_on(run_dir: Path, meta: dict[str, Any]) -> str | None:
    """A staged run (vm.stage(), booted elsewhere with boot.sh): what
    boot.sh recorded of the machine it ran on; None for a run booted here.
    A staged run not booted yet is an error that says how to boot it."""
    if not meta.get("staged"):
        return None
    rec = run_dir / vm.BOOTED_ON
    if not rec.exists() or not (run_dir / "output.log").exists():
        raise CollectError(f"{run_dir}: staged and not booted yet: copy it where QEMU runs, "
                           f"`sh {vm.BOOT_SCRIPT}` there, and bring back console.log, "
                           f"output.log and {vm.BOOTED_ON}")
    return _read(rec).strip()


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError as e:
        raise CollectError(f"{path}: cannot read it ({e.strerror or e})") from None


def _guest_output(run_dir: Path) -> tuple[dict[str, str], str]:
    """A kept guest run's sections and console text; CollectError when the
    kernel reported errors, the output is truncated or the script failed."""
    console = run_dir / "console.log"
    console_text = _read(console)
    errs = vm.kernel_errors(console_text)
    if errs:
        raise CollectError(f"{console}: the kernel reported errors, the run does not count:\n"
                           + "\n".join(f"    {e}" for e in errs[:10]))
    out = run_dir / "output.log"
    parsed = image.parse_output(_read(out))
    if parsed is None:
        raise CollectError(f"{out}: no {image.BEGIN} / END markers: the guest output is "
                           f"truncated (guest died or timed out?)")
    if parsed.rc != 0:
        raise CollectError(f"{out}: the guest script exited with rc={parsed.rc}")
    return parsed.sections, console_text


def _field(meta: dict[str, Any], key: str, kind: type, run_dir: Path) -> Any:
    value = meta.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise CollectError(f"{run_dir / vm.RUN_META}: {key!r} missing or not a "
                           f"{kind.__name__} (got {value!r})")
    return value


def collect_stress(run_dir: Path, meta: dict[str, Any], outdir: Path | None) -> Collected:
    preset = _field(meta, "preset", str, run_dir)
    seconds = _field(meta, "seconds", int, run_dir)
    variant = meta.get("variant") or stress.VARIANT
    steal = meta.get("steal") or "toggle"      # runs kept before --steal existed
    if steal not in stress.STEAL_MODES:
        raise CollectError(f"{run_dir / vm.RUN_META}: steal mode {steal!r}, expected one of "
                           f"{', '.join(stress.STEAL_MODES)}")
    try:
        topology.get(preset)
    except HarnessError as e:
        raise CollectError(f"{run_dir / vm.RUN_META}: {e}") from None
    out = run_dir / "output.log"
    raw = _read(out)
    _read(run_dir / "console.log")
    if image.BEGIN not in raw:
        raise CollectError(f"{out}: no {image.BEGIN} marker: the guest script never started "
                           f"(see {run_dir / 'console.log'})")
    try:
        s = stress.reevaluate(run_dir, preset, seconds, variant=str(variant),
                              note=f"collected from {run_dir}", steal=steal)
    except (ValueError, KeyError, IndexError) as e:
        raise CollectError(f"{out}: does not parse as stress output "
                           f"({type(e).__name__}: {e})") from None
    s["guest"]["collected"] = True
    path = stress.write_summary(s, outdir)
    return Collected("stress", bool(s["passed"]), stress.report(s), [path], s)


def collect_bench(run_dir: Path, meta: dict[str, Any], outdir: Path | None) -> Collected:
    run_json = run_dir / vm.RUN_META
    name = _field(meta, "name", str, run_dir)
    preset_name = _field(meta, "preset", str, run_dir)
    spec_json = _field(meta, "spec", dict, run_dir)
    build_meta = meta.get("build") or {}
    qemu = str(meta.get("qemu") or "unknown")
    try:
        spec = bench.BenchSpec.from_json(spec_json)
        _ = spec.wl                  # an unknown workload name fails here
        preset = topology.get(preset_name)
    except HarnessError as e:
        raise CollectError(f"{run_json}: {e}") from None
    where = booted_on(run_dir, meta)
    sections, _ = _guest_output(run_dir)
    out = run_dir / "output.log"
    try:
        topology.verify(preset, sections.get("topology", ""))
        topo = waste.from_preset(preset)
        runs = bench.plan(spec)
        ms = bench.collect(spec, runs, sections, topo)
    except (HarnessError, ValueError, KeyError, IndexError) as e:
        raise CollectError(f"{out}: {e}") from None
    uname = sections.get("meta", "").strip()
    guest = {"run_dir": str(run_dir), "uname": uname, "collected": True}
    if where is not None:
        guest["booted_on"] = where
    md = report.metadata(spec, preset_name, build_meta, qemu, guest)
    res: dict[str, Any] = report.write(name, outdir or paths.results_dir(), spec, ms, md)
    try:
        res.update(bench.timelines(spec, runs, sections, topo,
                                   outdir or paths.results_dir(), name))
    except HarnessError as e:
        raise CollectError(f"{out}: timeline: {e}") from None
    return Collected("bench", True, res["table"], [v for k, v in res.items() if k != "table"],
                     res, len(ms))


# What a host run's report says in place of a console's kernel errors.
NO_CONSOLE = ("host run: no guest console: no kernel errors are read (look at the machine's "
              "dmesg for the time of the run)")


def collect_host_bench(run_dir: Path, meta: dict[str, Any], outdir: Path | None) -> Collected:
    run_json = run_dir / vm.RUN_META
    name = _field(meta, "name", str, run_dir)
    spec_json = _field(meta, "spec", dict, run_dir)
    offer_json = _field(meta, "offer", dict, run_dir)
    try:
        spec = bench.BenchSpec.from_json(spec_json)
        _ = spec.wl                  # an unknown workload name fails here
        o = host.Offer.from_json(offer_json)
    except HarnessError as e:
        raise CollectError(f"{run_json}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise CollectError(f"{run_json}: the offer does not read back as host mode wrote it "
                           f"({type(e).__name__}: {e})") from None
    note = meta.get("skipped")
    if not isinstance(note, str):     # run dirs kept before run.json said it
        reason = o.steal_reason()
        note = host.skip_note(reason) if reason and not spec.a.features \
            and not spec.b.features else ""
    out = run_dir / "output.log"
    parsed = image.parse_output(_read(out))
    if parsed is None:
        raise CollectError(f"{out}: no {image.BEGIN} / END markers: the output is truncated "
                           f"(the run was killed?)")
    if parsed.rc != 0:
        raise CollectError(f"{out}: the script exited with rc={parsed.rc}")
    try:
        res = host.results(spec, parsed.sections, o, name, outdir or paths.results_dir(),
                           run_dir, seconds=None, note=note, end=None,
                           forced=bool(meta.get("forced_under_load")), collected=True)
    except (HarnessError, ValueError, KeyError, IndexError) as e:
        raise CollectError(f"{out}: {e}") from None
    res["table"] += NO_CONSOLE + "\n"
    with open(res["txt"], "a") as f:
        f.write(NO_CONSOLE + "\n")
    runs = [r for r in bench.plan(spec) if not r.warmup]
    return Collected("host-bench", True, res["table"],
                     [v for k, v in res.items() if k != "table"], res, len(runs))


def collect_sidebyside(run_dir: Path, meta: dict[str, Any], outdir: Path | None) -> Collected:
    run_json = run_dir / vm.RUN_META
    spec_json = _field(meta, "spec", dict, run_dir)
    variant = _field(meta, "variant", str, run_dir)
    where = booted_on(run_dir, meta)
    try:
        spec = sidebyside.Spec.from_json(spec_json)
        preset = topology.get(spec.preset)
    except HarnessError as e:
        raise CollectError(f"{run_json}: {e}") from None
    sections, console_text = _guest_output(run_dir)
    out = run_dir / "output.log"
    loads = sidebyside.plan(spec)
    build_meta = meta.get("build")
    md = provenance.provenance({variant: build_meta} if isinstance(build_meta, dict) else None)
    md.update({"preset": spec.preset, "kernel_variant": variant,
               "peers": meta.get("peers", "not recorded"),
               "scx_idlesteal_sha256": meta.get("scx_idlesteal_sha256", "not recorded"),
               "guest": {"uname": sections.get("meta", "").strip().splitlines()[:1],
                         "run_dir": str(run_dir), "collected": True,
                         "runs": sum(len(ld.runs) for ld in loads)}})
    if where is not None:
        md["guest"]["booted_on"] = where
    try:
        topology.verify(preset, sections.get("topology", ""))
        res: dict[str, Any] = sidebyside.finish(spec, loads, sections, md,
                                                outdir or sidebyside.results_dir(),
                                                console=console_text)
    except (HarnessError, ValueError, KeyError, IndexError) as e:
        raise CollectError(f"{out}: {e}") from None
    n = sum(1 for ld in loads for r in ld.runs
            if not r.warmup and ld.contender.name not in res.get("dropped", {}))
    return Collected(sidebyside.RUN_KIND, True, res["table"],
                     [v for k, v in res.items() if isinstance(v, Path)], res, n)


KINDS = {"stress": collect_stress, "bench": collect_bench, host.RUN_KIND: collect_host_bench,
         sidebyside.RUN_KIND: collect_sidebyside}


def collect(run_dir: Path, outdir: Path | None = None) -> Collected:
    """Re-parse the kept run directory `run_dir` into results in `outdir`
    (default: results/stress/ for a stress run, results/ for a bench run).

    Returns a Collected (print .text, list .paths, exit non-zero unless
    .passed).  Raises CollectError (a HarnessError) naming the file when
    run.json is missing or of an unknown kind, or the output cannot be
    parsed; a bench run with kernel errors raises, a stress run with them
    (or with a failed or truncated script) is collected as failed."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    kind = meta["kind"]
    if kind not in KINDS:
        raise CollectError(f"{run_dir / vm.RUN_META}: unknown kind {kind!r}; known: "
                           f"{', '.join(KINDS)}")
    return KINDS[kind](run_dir, meta, outdir)
