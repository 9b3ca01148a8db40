import sys
from idlesteal.kernel import build
from idlesteal.guest import image, topology, vm
from idlesteal.scx import own as scx
from idlesteal.runs import stress
loader = tuple(sys.argv[1].split()) if len(sys.argv) > 1 else ("scx_idlesteal",)
secs = int(sys.argv[2]) if len(sys.argv) > 2 else 60
p = stress.Params(seconds=secs, ncpus=8, scx=loader)
bins = {n: scx.binary(n) for n in scx.SCHEDULERS}
files = scx.image_files(bins) + ["/tmp/hb/heartbeat:/usr/bin/heartbeat"]
initrd = image.build_base(files=files)
script = "heartbeat &\n" + stress.script(p)
try:
    res = vm.run_script(script, topology.get("2x2x2"), build.bzimage("scx"), initrd,
                        timeout=secs + 60, name="hb", cmdline=list(stress.CMDLINE))
    print("FINISHED", res.run_dir)
except vm.GuestError as e:
    print("ERROR", type(e).__name__, e.run_dir)
