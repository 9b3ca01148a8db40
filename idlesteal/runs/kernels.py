"""Kernels ready to boot, and one workload on two kernel variants.

ensure() is what every guest command calls before it boots: prepare the tree
(base + patches/series) and build the variant, or, with prepare=False, take
the image already built.  compare() runs one command on two variants, one
boot per sample, alternating (`idlesteal kernels`, `make reference`).
"""
from __future__ import annotations

import json
import shlex
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..kernel import build, provenance, tree
from ..guest import image, topology, vm
from ..measure import stats, workload
from ..util import HarnessError, log


def ensure(variant: str, prepare: bool = True, force: bool = False) -> Path:
    """The variant's kernel image; prepares and builds first unless told not to."""
    if prepare:
        tree.prepare(force)
        return build.build(variant)
    return build.kernel_image(variant)


def ensure_guest(variant: str, prepare: bool = True, force: bool = False,
                 tools: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """(kernel image, base initramfs).  `tools`: extra host programs the
    image must carry (image.TOOLS)."""
    return ensure(variant, prepare, force), image.build_base(tools=tools)


@dataclass
class Comparison:
    text: str
    txt: Path
    json: Path


def compare(variants: list[str], preset: topology.Preset, w: workload.Workload, level: int,
            size: int, boots: int, *, prepare: bool = True, force: bool = False,
            timeout: float = 900, name: str = "", outdir: Path, runs: int = 1) -> Comparison:
    """`w` at one level on each variant, `boots` boots per variant, the
    order alternating per boot; writes outdir/<name>.{txt,json}.

    With `runs` > 1 the command runs that many times in each boot and the
    boot's sample is their median (a run the host starved does not make the
    boot's number).  The table gives the ratio of means and, robust to a
    boot far off, the ratio of medians with its bootstrap interval and
    Mann-Whitney's p (stats.median_ratio)."""
    if len(variants) != 2:
        raise HarnessError(f"want two variants, got {','.join(variants)!r}")
    if boots < 2:
        raise HarnessError("--boots must be at least 2 (a spread needs two samples)")
    kernels = {v: ensure(v, prepare, force) for v in variants}
    initrd = image.build_base(tools=(w.binary,) if w.binary in image.TOOLS else ())
    cmd = w.argv(level, size or w.default_size)
    if runs < 1:
        raise HarnessError(f"--runs must be at least 1, got {runs}")
    script = "section topology\n" + topology.GUEST_SNIPPET.strip() + "\n" + "".join(
        f"section output.{i}\n{shlex.join(cmd)} 2>&1 || fail '{w.name} failed'\n"
        for i in range(runs))
    values: dict[str, list[float]] = {v: [] for v in variants}
    done: list[dict] = []
    failed_boots: list[dict] = []
    for b in range(boots):
        for v in (variants if b % 2 == 0 else variants[::-1]):
            for attempt in (1, 2):
                try:
                    res = vm.run_script(script, preset, kernels[v], initrd, timeout=timeout,
                                        name=f"kernels-{v}")
                    break
                except vm.GuestKernelError as e:
                    # A JUMP_LABEL kernel (defconfig) can die at boot under
                    # multi-threaded TCG ("Oops: int3", docs/tcg.md); say so,
                    # keep the log, boot once more.
                    failed_boots.append({"variant": v, "error": str(e).splitlines()[0],
                                         "console": str(e.console)})
                    log(f"  {v}: kernel error ({str(e).splitlines()[1].strip()}); "
                        f"console kept at {e.console}" + ("; retrying" if attempt == 1 else ""))
                    if attempt == 2:
                        raise
            preset.verify(res.sections.get("topology", ""))
            xs = [w.parse(res.sections.get(f"output.{i}", ""))[w.metric] for i in range(runs)]
            x = statistics.median(xs)
            values[v].append(x)
            done.append({"variant": v, "boot": b, w.metric: x, "runs": xs,
                         "run_dir": str(res.run_dir)})
            log(f"  {v}: {w.metric} {x:g} {w.unit}"
                + (f" (median of {', '.join(f'{y:g}' for y in xs)})" if runs > 1 else ""))
    va, vb = variants
    r = stats.ratio(values[vb], values[va])
    mr = stats.median_ratio(values[vb], values[va])
    per = f"the median of {runs} runs per boot" if runs > 1 else "one run per boot"
    lines = [f"{shlex.join(cmd)} on {preset.name}, one boot per sample ({per}), {boots} per "
             "kernel, alternating"]
    for v in variants:
        sm = stats.summarize(values[v])
        lines.append(f"  {v:<12} {w.metric} {sm.mean:.3f} ± {sm.ci95:.3f} {w.unit} (95% CI)  "
                     f"samples {', '.join(f'{x:.2f}' for x in values[v])}")
    lines.append(f"  {vb}/{va} = {r.value:.3f} [{r.low:.3f}, {r.high:.3f}] (means, delta method)")
    lines.append(f"  {vb}/{va} = {mr.fmt()} (medians, bootstrap)")
    for fb in failed_boots:
        lines.append(f"  failed boot (retried): {fb['variant']}: {fb['error']}")
    text = "\n".join(lines) + "\n"
    outdir.mkdir(parents=True, exist_ok=True)
    name = name or f"kernels-{preset.name}-{'-'.join(variants)}"
    txt, js = outdir / f"{name}.txt", outdir / f"{name}.json"
    txt.write_text(text)
    js.write_text(json.dumps(
        {"command": cmd, "preset": preset.name, "values": values, "runs": done,
         "runs_per_boot": runs,
         "ratio": {"value": r.value, "low": r.low, "high": r.high},
         "median_ratio": {"value": mr.value, "low": mr.low, "high": mr.high, "p": mr.p},
         "failed_boots": failed_boots,
         **provenance.provenance({v: build.read_meta(v) for v in variants})}, indent=2) + "\n")
    return Comparison(text, txt, js)
