// SPDX-License-Identifier: GPL-2.0
//
// The BPF side (src/bpf/main.bpf.c, C) compiled by scx_cargo with the
// sched_ext headers and vmlinux.h it ships, as the published scx_*
// schedulers are, and src/bpf/intf.h turned into Rust by bindgen (what
// both sides share); clang is BPF_CLANG or `clang` on PATH (Debian's
// clang-19, /usr/lib/llvm-19/bin: idlesteal/scx/own.py sets it).
fn main() {
    scx_cargo::BpfBuilder::new()
        .unwrap()
        .enable_intf("src/bpf/intf.h", "bpf_intf.rs")
        .enable_skel("src/bpf/main.bpf.c", "bpf")
        .build()
        .unwrap();
}
