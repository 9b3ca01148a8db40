#!/bin/sh
# Packs this machine's QEMU (qemu-system-x86_64, the shared libraries it
# needs except glibc's, the TCG accelerator module, the firmware a -kernel
# boot reads) into one archive for a machine without QEMU, where
# boot-runs.sh unpacks it.  Usage: qemu-bundle.sh OUT.tar.xz
set -eu
out=${1:?usage: qemu-bundle.sh OUT.tar.xz}
qemu=$(command -v qemu-system-x86_64) || { echo "qemu-system-x86_64 not found" >&2; exit 1; }
moddir=/usr/lib/x86_64-linux-gnu/qemu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/qemu/lib" "$tmp/qemu/modules" "$tmp/qemu/share"
cp "$qemu" "$tmp/qemu/"
ldd "$qemu" | awk '/=>/ { print $3 }' | while read -r lib; do
    case $lib in
    */libc.so.*|*/libm.so.*|*/ld-linux*|*/libpthread.so.*|*/libdl.so.*|*/librt.so.*) ;;
    *) cp -L "$lib" "$tmp/qemu/lib/" ;;
    esac
done
# Debian builds TCG as a module: without it QEMU has no accelerator
cp "$moddir/accel-tcg-x86_64.so" "$tmp/qemu/modules/"
for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin \
         /usr/share/qemu/linuxboot.bin /usr/share/qemu/kvmvapic.bin \
         /usr/share/qemu/multiboot_dma.bin; do
    cp -L "$f" "$tmp/qemu/share/"
done
"$qemu" --version | head -1 >"$tmp/qemu/VERSION"
tar cJf "$out" -C "$tmp" qemu
echo "$out: $(head -1 "$tmp/qemu/VERSION"), $(du -h "$out" | cut -f1)"
