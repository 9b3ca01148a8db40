// SPDX-License-Identifier: GPL-2.0
//
// The counters of src/bpf/main.bpf.c (enum stat_idx of intf.h, summed over the CPUs)
// as scx_stats metrics: `--stats SECS` beside the scheduler, `--monitor
// SECS` from another shell, `--help-stats` describes them.
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use scx_stats::prelude::*;
use scx_stats_derive::{Stats, stat_doc};
use serde::{Deserialize, Serialize};

/// How many counters the BPF side keeps (IDLESTEAL_NR_STATS of intf.h).
pub const NR_STATS: usize = crate::bpf_intf::stat_idx_IDLESTEAL_NR_STATS as usize;

/// The names the BPF side counts under, in enum stat_idx's order (the
/// loader's "stats" and "final" lines, parsed by idlesteal/scx/own.py); a
/// counter added to intf.h without a name here does not compile.
pub const NAMES: [&str; NR_STATS] = [
    "steals",
    "failed",
    "search_ns",
    "gated",
    "kicks",
    "local",
    "queued",
    "remote_llc",
    "fallback",
    "sync_queued",
    "recheck",
    "idle_kick",
    "pulls",
    "fallback_run",
    "migdis",
    "remote_idle",
    "yield_keep",
    "yield_give",
    "hotplug",
    "kept",
    "pull_llc",
    "starved",
    "preempt",
    "short",
    "kick_core",
    "none_idle",
    "waker_cpu",
    "timed",
    "wake_bounded",
    "offline_idle",
    "remote_node",
];

#[stat_doc]
#[derive(Clone, Debug, Default, Serialize, Deserialize, Stats)]
#[stat(top)]
pub struct Metrics {
    #[stat(desc = "Tasks stolen by an idle CPU from an overloaded CPU of its LLC")]
    pub steals: u64,
    #[stat(desc = "Steal searches that took nothing")]
    pub failed: u64,
    #[stat(desc = "Guest ns spent in the timed steal searches (see timed)")]
    pub search_ns: u64,
    #[stat(desc = "Searches skipped by the cost gate (average idle below the search cost)")]
    pub gated: u64,
    #[stat(desc = "Idle CPUs kicked to steal")]
    pub kicks: u64,
    #[stat(desc = "Wakeups placed on an idle CPU")]
    pub local: u64,
    #[stat(desc = "Tasks queued on a CPU's own queue")]
    pub queued: u64,
    #[stat(desc = "Tasks stolen from another LLC of the node (-n)")]
    pub remote_llc: u64,
    #[stat(desc = "Tasks queued in the fallback queue: their own CPU not allowed")]
    pub fallback: u64,
    #[stat(desc = "SYNC wakees queued behind the waker's waiters")]
    pub sync_queued: u64,
    #[stat(desc = "Own tasks found after a failed steal")]
    pub recheck: u64,
    #[stat(desc = "CPUs that went idle with their queue not empty")]
    pub idle_kick: u64,
    #[stat(desc = "Tasks pulled at a slice end (no CPU idle)")]
    pub pulls: u64,
    #[stat(desc = "Tasks taken from the fallback queue")]
    pub fallback_run: u64,
    #[stat(desc = "Migration-disabled tasks enqueued")]
    pub migdis: u64,
    #[stat(desc = "Tasks sent to an idle CPU of another LLC, none idle in their own")]
    pub remote_idle: u64,
    #[stat(desc = "sched_yield() with nothing waiting: slice kept")]
    pub yield_keep: u64,
    #[stat(desc = "sched_yield() to a waiting task: slice ended")]
    pub yield_give: u64,
    #[stat(desc = "CPUs that went online or offline (tables rewritten, no restart)")]
    pub hotplug: u64,
    #[stat(desc = "Slice ends where the task, behind in vtime, kept its CPU")]
    pub kept: u64,
    #[stat(desc = "Tasks pulled at a slice end from another LLC")]
    pub pull_llc: u64,
    #[stat(desc = "Tasks run out of vtime order after waiting a fifth of the watchdog's limit")]
    pub starved: u64,
    #[stat(desc = "Wakeups that preempted a task further ahead in vtime")]
    pub preempt: u64,
    #[stat(desc = "Slices cut short for the tasks waiting for the CPU")]
    pub short: u64,
    #[stat(desc = "Arrival kicks that found a CPU of a fully idle core (not with -c)")]
    pub kick_core: u64,
    #[stat(desc = "Wakees queued without a second idle search: ops.select_cpu() found none")]
    pub none_idle: u64,
    #[stat(desc = "SYNC wakees placed on the waker's CPU: none idle, nothing waiting there")]
    pub waker_cpu: u64,
    #[stat(desc = "Steal searches timed: 1 in 8, for the cost gate's average")]
    pub timed: u64,
    #[stat(desc = "Wakeups queued at the bound behind their queue's head (a crowded CPU)")]
    pub wake_bounded: u64,
    #[stat(desc = "Idle CPUs claimed that were offline (their idle bit stays set): passed over")]
    pub offline_idle: u64,
    #[stat(desc = "Tasks sent to an idle CPU of another node: none idle in their own")]
    pub remote_node: u64,
    #[stat(desc = "1 while stealing is on (SIGUSR1 off, SIGUSR2 on)")]
    pub steal_on: u64,
}

impl Metrics {
    pub fn from_totals(totals: &[u64; NR_STATS], steal_on: bool) -> Self {
        let t = |i: usize| totals[i];
        Metrics {
            steals: t(0),
            failed: t(1),
            search_ns: t(2),
            gated: t(3),
            kicks: t(4),
            local: t(5),
            queued: t(6),
            remote_llc: t(7),
            fallback: t(8),
            sync_queued: t(9),
            recheck: t(10),
            idle_kick: t(11),
            pulls: t(12),
            fallback_run: t(13),
            migdis: t(14),
            remote_idle: t(15),
            yield_keep: t(16),
            yield_give: t(17),
            hotplug: t(18),
            kept: t(19),
            pull_llc: t(20),
            starved: t(21),
            preempt: t(22),
            short: t(23),
            kick_core: t(24),
            none_idle: t(25),
            waker_cpu: t(26),
            timed: t(27),
            wake_bounded: t(28),
            offline_idle: t(29),
            remote_node: t(30),
            steal_on: steal_on as u64,
        }
    }

    fn format<W: Write>(&self, w: &mut W) -> Result<()> {
        writeln!(
            w,
            "[scx_idlesteal] steals {} failed {} gated {} kicks {} idle_kick {} \
             pulls {} preempt {} search {} us in {} timed, stealing {}",
            self.steals,
            self.failed,
            self.gated,
            self.kicks,
            self.idle_kick,
            self.pulls,
            self.preempt,
            self.search_ns / 1000,
            self.timed,
            if self.steal_on != 0 { "on" } else { "off" }
        )?;
        Ok(())
    }

    fn delta(&self, prev: &Self) -> Self {
        let d = |a: u64, b: u64| a.wrapping_sub(b);
        Metrics {
            steals: d(self.steals, prev.steals),
            failed: d(self.failed, prev.failed),
            search_ns: d(self.search_ns, prev.search_ns),
            gated: d(self.gated, prev.gated),
            kicks: d(self.kicks, prev.kicks),
            local: d(self.local, prev.local),
            queued: d(self.queued, prev.queued),
            remote_llc: d(self.remote_llc, prev.remote_llc),
            fallback: d(self.fallback, prev.fallback),
            sync_queued: d(self.sync_queued, prev.sync_queued),
            recheck: d(self.recheck, prev.recheck),
            idle_kick: d(self.idle_kick, prev.idle_kick),
            pulls: d(self.pulls, prev.pulls),
            fallback_run: d(self.fallback_run, prev.fallback_run),
            migdis: d(self.migdis, prev.migdis),
            remote_idle: d(self.remote_idle, prev.remote_idle),
            yield_keep: d(self.yield_keep, prev.yield_keep),
            yield_give: d(self.yield_give, prev.yield_give),
            hotplug: d(self.hotplug, prev.hotplug),
            kept: d(self.kept, prev.kept),
            pull_llc: d(self.pull_llc, prev.pull_llc),
            starved: d(self.starved, prev.starved),
            preempt: d(self.preempt, prev.preempt),
            short: d(self.short, prev.short),
            kick_core: d(self.kick_core, prev.kick_core),
            none_idle: d(self.none_idle, prev.none_idle),
            waker_cpu: d(self.waker_cpu, prev.waker_cpu),
            timed: d(self.timed, prev.timed),
            wake_bounded: d(self.wake_bounded, prev.wake_bounded),
            offline_idle: d(self.offline_idle, prev.offline_idle),
            remote_node: d(self.remote_node, prev.remote_node),
            steal_on: self.steal_on,
        }
    }
}

pub fn server_data() -> StatsServerData<(), Metrics> {
    let open: Box<dyn StatsOpener<(), Metrics>> = Box::new(move |(req_ch, res_ch)| {
        req_ch.send(())?;
        let mut prev = res_ch.recv()?;
        let read: Box<dyn StatsReader<(), Metrics>> = Box::new(move |_args, (req_ch, res_ch)| {
            req_ch.send(())?;
            let cur = res_ch.recv()?;
            let delta = cur.delta(&prev);
            prev = cur;
            delta.to_json()
        });
        Ok(read)
    });
    StatsServerData::new()
        .add_meta(Metrics::meta())
        .add_ops("top", StatsOps { open, close: None })
}

pub fn monitor(intv: Duration, shutdown: Arc<AtomicBool>) -> Result<()> {
    scx_utils::monitor_stats::<Metrics>(
        &[],
        intv,
        || shutdown.load(Ordering::Relaxed),
        |m| m.format(&mut std::io::stdout()),
    )
}
