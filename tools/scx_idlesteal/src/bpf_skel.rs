// SPDX-License-Identifier: GPL-2.0
//
// The skeleton scx_cargo generates from src/bpf/main.bpf.c (build.rs).
#![allow(
    clippy::all,
    unused_imports,
    dead_code,
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case
)]
include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
