"""The starvation-guard part of test_scx_correctness.py, ROUNDS times in
one 2x2x2 boot, with the console's ejection lines after each round.

Run from the repository root:
  IDLESTEAL_TEST_NO_BUILD=1 /usr/bin/python3 experiments/2026-12-03-scx-starve-stall/loop.py [ROUNDS] [LOADER|''] [LOADER OPTIONS]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from idlesteal.guest import image, topology, vm  # noqa: E402
from idlesteal.scx import own as scx  # noqa: E402
from tests.guest import test_scx_correctness as t  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
LOADER = Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else scx.binary("scx_idlesteal")
ARGS = " ".join(sys.argv[3:])     # more of the loader's options, e.g. -l 5000

ROUND = f"""
scx_start /tmp/starve.log scx_idlesteal -t {t.STARVE_TIMEOUT_MS} {ARGS}
sh -c "echo \\$\\$ > $CG/sheavy/cgroup.procs; exec taskset -c {t.STARVE_CPU} hogs -n {t.STARVE_HEAVY} -w 1 -d {t.STARVE_SECONDS}" > /dev/null &
a=$!
sh -c "echo \\$\\$ > $CG/slight/cgroup.procs; exec taskset -c {t.STARVE_CPU} hogs -n 2 -w 1 -d {t.STARVE_SECONDS}" > /tmp/starve.out &
b=$!
wait $a $b || echo "hogs rc $?"
echo "light $(grep RESULT /tmp/starve.out)"
after
scx_end
cat /tmp/starve.log
dmesg -c | grep -A40 "sched_ext: BPF" | head -80
"""

SCRIPT = f"""
section topology
{topology.GUEST_SNIPPET.strip()}
{t.HELPERS}
CG=/sys/fs/cgroup
echo "+cpu" > $CG/cgroup.subtree_control
mkdir -p $CG/slight $CG/sheavy
echo 1 > $CG/slight/cpu.weight
echo 10000 > $CG/sheavy/cpu.weight
dmesg -c > /dev/null
""" + "".join(f"section r{i}\n{ROUND}" for i in range(ROUNDS))


def main() -> None:
    kernel = t.kernel_for(scx.VARIANT)
    initrd = image.build_base(files=scx.image_files({"scx_idlesteal": LOADER}))
    preset = topology.get("2x2x2")
    res = vm.run_script(SCRIPT, preset, kernel, initrd, timeout=600, name="starve-loop")
    print(res.run_dir)
    for i in range(ROUNDS):
        text = res.sections.get(f"r{i}", "")
        ok = any(l.startswith("after enabled") for l in text.splitlines())
        starved = [w for l in text.splitlines() if l.startswith("final ") for w in l.split()
                   if w.startswith("starved=")]
        print(f"round {i}: {'in charge' if ok else 'EJECTED'} {' '.join(starved)}")
        if not ok:
            print(text)


if __name__ == "__main__":
    main()
