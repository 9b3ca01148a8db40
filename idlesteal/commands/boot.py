"""The boot command: boot a topology preset with a kernel variant, verify
the topology the guest sees against the preset, then run the user's
shell commands (--cmd or --script) in it with the extra programs of
--tools and the files of --file, and print their output.  Its options
(add_boot_opts), its check after parsing (check_boot: --cmd or --script,
the host programs the image carries) and the run (cmd_boot).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..runs import kernels
from ..guest import image, topology, vm
from . import args, common, opts
from .args import UsageError
from ..util import log


def add_boot_opts(sp: argparse.ArgumentParser) -> None:
    opts.guest(sp)
    sp.add_argument("--cmd", help="shell commands to run in the guest")
    sp.add_argument("--script", type=args.existing_file,
                    help="file with shell commands to run in the guest")
    sp.add_argument("--tools", default="", type=args.tools, help=f"extra programs in the image "
                    f"(comma-separated: {', '.join(image.TOOLS)})")
    opts.files(sp)
    opts.timeout(sp, 600, "script timeout")


def check_boot(a: argparse.Namespace) -> None:
    if a.cmd is not None and a.script is not None:
        raise UsageError("--script", a.script, "--cmd or --script, not both")
    common.tools_present(a, a.tools)


def cmd_boot(a: argparse.Namespace) -> int:
    preset = topology.get(a.preset)
    user = Path(a.script).read_text() if a.script else (a.cmd or "")
    kernel = kernels.ensure(a.variant, a.build, a.force)
    initrd = image.build_base(tools=tuple(a.tools), files=tuple(a.file))
    script = ("section topology\n" + preset.check_script.strip() + "\n"
              "section user\n" + user + "\n")
    res = vm.run_script(script, preset, kernel, initrd, timeout=a.timeout, name="boot",
                        cmdline=a.append.split() if a.append else None)
    obs = preset.verify(res.sections.get("topology", ""))
    log(f"topology {preset.name} verified: {len(obs.online)} CPUs, "
        f"{len(preset.llc_groups())} LLC(s), {len(obs.nodes)} node(s); "
        f"booted in {res.boot_seconds:.1f} s, {res.seconds:.1f} s in all")
    sys.stdout.write(res.sections.get("user", ""))
    return 0
