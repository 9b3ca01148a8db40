// SPDX-License-Identifier: GPL-2.0
//
// src/bpf/intf.h as bindgen makes it (build.rs): the table sizes, the
// counters' indexes (stat_idx_*) and struct cpu_ctx.
#![allow(
    clippy::all,
    dead_code,
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case
)]
include!(concat!(env!("OUT_DIR"), "/bpf_intf.rs"));
