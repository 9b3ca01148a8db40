"""Kernels ready to boot, and one workload on two kernel variants.

ensure() is what every guest command calls before it boots: prepare the tree
(base + patches/series) and build the variant, or, with prepare=False, take
the image already built.  compare() runs one command on two variants, one
boot per sample, alternating (`idlesteal kernels`, `make reference`).
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from . import build, image, provenance, stats, topology, tree, vm, workload
from .util import HarnessError, log


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
            timeout: float = 900, name: str = "", outdir: Path) -> Comparison:
    """`w` at one level on each variant, `boots` boots per variant, the
    order alternating per boot; writes outdir/<name>.{txt,json}."""
    if len(variants) != 2:
        raise HarnessError(f"want two variants, got {','.join(variants)!r}")
    if boots < 2:
        raise HarnessError("--boots must be at least 2 (a spread needs two samples)")
    kernels = {v: ensure(v, prepare, force) for v in variants}
    initrd = image.build_base(tools=(w.binary,) if w.binary in image.TOOLS else ())
    cmd = w.argv(level, size or w.default_size)
    script = ("section topology\n" + topology.GUEST_SNIPPET.strip() + "\n"
              f"section output\n{shlex.join(cmd)} 2>&1 || fail '{w.name} failed'\n")
    values: dict[str, list[float]] = {v: [] for v in variants}
    runs = []
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
            x = w.parse(res.sections.get("output", ""))[w.metric]
            values[v].append(x)
            runs.append({"variant": v, "boot": b, w.metric: x, "run_dir": str(res.run_dir)})
            log(f"  {v}: {w.metric} {x:g} {w.unit}")
    va, vb = variants
    r = stats.ratio(values[vb], values[va])
    lines = [f"{shlex.join(cmd)} on {preset.name}, one boot per sample, {boots} per kernel, "
             "alternating"]
    for v in variants:
        sm = stats.summarize(values[v])
        lines.append(f"  {v:<12} {w.metric} {sm.mean:.3f} ± {sm.ci95:.3f} {w.unit} (95% CI)  "
                     f"samples {', '.join(f'{x:.2f}' for x in values[v])}")
    lines.append(f"  {vb}/{va} = {r.value:.3f} [{r.low:.3f}, {r.high:.3f}]")
    for fb in failed_boots:
        lines.append(f"  failed boot (retried): {fb['variant']}: {fb['error']}")
    text = "\n".join(lines) + "\n"
    outdir.mkdir(parents=True, exist_ok=True)
    name = name or f"kernels-{preset.name}-{'-'.join(variants)}"
    txt, js = outdir / f"{name}.txt", outdir / f"{name}.json"
    txt.write_text(text)
    js.write_text(json.dumps(
        {"command": cmd, "preset": preset.name, "values": values, "runs": runs,
         "ratio": {"value": r.value, "low": r.low, "high": r.high},
         "failed_boots": failed_boots,
         **provenance.provenance({v: build.read_meta(v) for v in variants})}, indent=2) + "\n")
    return Comparison(text, txt, js)
