#!/bin/sh
# Boots staged run directories (`python3 -m idlesteal bench|side-by-side
# --stage`) one after the other on a machine without QEMU installed, with
# the QEMU of qemu-bundle.sh's archive.  Each run's logs come back as
# OUTDIR/<run>.txz.aa, .ab, ... (xz, split at 15 MiB); on the machine that
# staged them: cat RUN.txz.a? | xz -d | tar xf - -C build/runs/RUN, then
# python3 -m idlesteal collect build/runs/RUN.
# Usage: boot-runs.sh QEMU.tar.xz OUTDIR RUN_DIR...   (a file RUN_DIR/limit:
# that run's time limit in seconds, default 600)
set -u
bundle=${1:?usage: boot-runs.sh QEMU.tar.xz OUTDIR RUN_DIR...}
out=${2:?usage: boot-runs.sh QEMU.tar.xz OUTDIR RUN_DIR...}
shift 2
q=$(mktemp -d)
tar xJf "$bundle" -C "$q" || exit 1
mkdir -p "$q/bin" "$out"
cat >"$q/bin/qemu-system-x86_64" <<W
#!/bin/sh
LD_LIBRARY_PATH=$q/qemu/lib QEMU_MODULE_DIR=$q/qemu/modules exec $q/qemu/qemu-system-x86_64 "\$@"
W
chmod +x "$q/bin/qemu-system-x86_64"
export PATH="$q/bin:$PATH" QEMU_DATADIR="$q/qemu/share"
{ uname -a; nproc; cat /proc/loadavg; lscpu; } >"$out/machine.txt" 2>&1
qemu-system-x86_64 --version | head -1 || exit 1
for r in "$@"; do
    n=$(basename "$r")
    limit=$(cat "$r/limit" 2>/dev/null || echo 600)
    start=$(date +%s)
    timeout "$limit" sh "$r/boot.sh"
    rc=$?
    echo "$n: rc=$rc in $(( $(date +%s) - start )) s"
    tar cf - -C "$r" console.log output.log qemu.log booted-on.txt |
        xz -1 -T0 | split -b 15M - "$out/$n.txz."
done
