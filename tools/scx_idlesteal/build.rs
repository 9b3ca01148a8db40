// SPDX-License-Identifier: GPL-2.0
//
// The BPF side (scx_idlesteal.bpf.c, C) compiled by scx_cargo with the
// sched_ext headers and vmlinux.h it ships, as the published scx_*
// schedulers are; clang is BPF_CLANG or `clang` on PATH (Debian's
// clang-19, /usr/lib/llvm-19/bin: idlesteal/scx/own.py sets it).
fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_skel("scx_idlesteal.bpf.c", "bpf")
        .build()
        .unwrap();
}
