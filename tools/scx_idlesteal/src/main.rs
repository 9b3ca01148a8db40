// SPDX-License-Identifier: GPL-2.0
//
// scx_idlesteal's user space: reads the CPU topology (scx_utils), loads
// src/bpf/main.bpf.c, prints its counters once a second and unloads on
// SIGINT or SIGTERM, giving the tasks back to the fair class.
//
//   SIGUSR1  stop stealing (run-time A/B switch)
//   SIGUSR2  steal again
//
// Built with cargo from crates.io at pinned versions, like the published
// scx_* schedulers (idlesteal/scx/own.py); the BPF side is C, compiled by
// scx_cargo with the sched_ext headers it ships.
mod bpf_intf;
mod bpf_skel;
mod stats;
mod topo;

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bpf_skel::*;
use clap::Parser;
use crossbeam::channel::RecvTimeoutError;
use libbpf_rs::skel::Skel;
use libbpf_rs::{AsRawLibbpf, MapCore, MapFlags, OpenObject};
use scx_stats::prelude::*;
use scx_utils::libbpf_clap_opts::LibbpfOpts;
use scx_utils::{
    Topology, UserExitInfo, compat, scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited,
    uei_report,
};

use stats::Metrics;
use topo::Tables;

const NAME: &str = "scx_idlesteal";

/// @s as a number in [@min, @max]; else what is wanted ("100 to 10000000 us").
fn parse_range<T>(s: &str, min: T, max: T, unit: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    match s.parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(format!("{min} to {max} {unit}")),
    }
}

/// scx_idlesteal: per-CPU vtime queues; idle CPUs steal from overloaded CPUs
/// of their LLC (SMT siblings first), gated by idle time against search cost;
/// cgroups' cpu.weight applied down the hierarchy.
///
/// SIGUSR1 turns stealing off, SIGUSR2 on; SIGINT/SIGTERM unload.  When
/// sched_ext ejects it, the reason and a debug dump follow "EXIT:".
#[derive(Debug, Parser)]
#[command(name = NAME, version, disable_version_flag = true)]
struct Opts {
    /// Time slice in us (default: SCX_SLICE_DFL, 20 ms).
    #[arg(short = 's', long, value_parser = |s: &str| parse_range(s, 100u64, 10_000_000, "us"))]
    slice_us: Option<u64>,

    /// The shortest slice in us when tasks wait for a CPU (the slice is
    /// divided by 1 + the tasks waiting), and how far ahead in vtime a
    /// running task must be for a waking task to preempt it; capped at the
    /// slice.
    #[arg(short = 'l', long, default_value_t = 1000,
          value_parser = |s: &str| parse_range(s, 50u64, 10_000_000, "us"))]
    slice_min_us: u64,

    /// Fixed slices: never shortened for waiting tasks.
    #[arg(short = 'f', long)]
    fixed_slices: bool,

    /// No wakeup preemption: a waking task with no idle CPU waits for a
    /// running task's slice to end.
    #[arg(short = 'p', long)]
    no_preempt: bool,

    /// sched_ext's watchdog ejects the scheduler when a runnable task waits
    /// this long, in ms (default 5000).
    #[arg(short = 't', long, value_parser = |s: &str| parse_range(s, 1u32, 30_000, "ms"))]
    timeout_ms: Option<u32>,

    /// Also steal from the other LLCs of the node.
    #[arg(short = 'n', long)]
    nearest_llc: bool,

    /// Start with stealing off (no steals, no pulls).
    #[arg(short = 'o', long)]
    off: bool,

    /// Wake no idle CPU for a task queued behind another (no arrival kick):
    /// it waits for a CPU of its LLC to go idle.
    #[arg(short = 'k', long)]
    no_kick: bool,

    /// Kick any idle CPU for a task queued behind another, in LLC order,
    /// not a CPU of a fully idle core first.
    #[arg(short = 'c', long)]
    any_cpu_kick: bool,

    /// Have ops.enqueue() see migration-disabled tasks, as 6.12 does
    /// (SCX_OPS_ENQ_MIGRATION_DISABLED; a test switch).
    #[arg(short = 'm', long)]
    enq_migration_disabled: bool,

    /// Run the scheduler and print scx_stats metrics every SECS.
    #[arg(long, value_name = "SECS", value_parser = |s: &str| parse_range(s, 0.1f64, 3600.0, "seconds"))]
    stats: Option<f64>,

    /// Print the metrics of a running scx_idlesteal every SECS; load nothing.
    #[arg(long, value_name = "SECS", value_parser = |s: &str| parse_range(s, 0.1f64, 3600.0, "seconds"))]
    monitor: Option<f64>,

    /// Describe the metrics and exit.
    #[arg(long)]
    help_stats: bool,

    /// Time each BPF callback (the kernel's BPF run-time statistics, on
    /// while this runs) and print at exit, per callback, its calls and
    /// mean run time in ns: "cost NAME calls N mean_ns M total_ms T".
    #[arg(long)]
    cost: bool,

    /// Print libbpf's debug messages (and set --log-level debug).
    #[arg(short = 'v', long)]
    verbose: bool,

    /// What to print: error, warn, info (the lines at load, on a CPU
    /// change, a switch and a restart) or debug (also each CPU's steal gate
    /// and cpufreq target at exit).  The counters line at exit is always
    /// printed.
    #[arg(long, default_value = "info", value_parser = parse_level)]
    log_level: Level,

    /// Print the counters line ("stats name=value ...") every second, as
    /// the one at exit; off by default, so a service's journal gets a line
    /// only at load, on a change and at exit.  `--stats` and `--monitor`
    /// print the counters as scx_stats metrics instead.
    #[arg(long)]
    counters: bool,

    /// The default (no counters line every second); kept for option files
    /// that still pass it.
    #[arg(short = 'q', long, hide = true)]
    quiet: bool,

    /// Bytes of sched_ext's debug dump when it ejects the scheduler (0: the
    /// kernel's default, 32 KiB).
    #[arg(long, default_value_t = 0, value_parser = |s: &str| parse_range(s, 0u32, 1 << 30, "bytes"))]
    exit_dump_len: u32,

    /// Print the version and exit.
    #[arg(short = 'V', long)]
    version: bool,

    /// libbpf's object-open options, as the scx schedulers take them.
    #[clap(flatten, next_help_heading = "Libbpf Options")]
    libbpf: LibbpfOpts,
}

/// How much the loader prints (--log-level), least first.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
enum Level {
    Error,
    Warn,
    Info,
    Debug,
}

fn parse_level(s: &str) -> Result<Level, String> {
    match s {
        "error" => Ok(Level::Error),
        "warn" => Ok(Level::Warn),
        "info" => Ok(Level::Info),
        "debug" => Ok(Level::Debug),
        _ => Err("one of error, warn, info, debug".to_string()),
    }
}

/// The level of --log-level, set once in run() (Level as u8).
static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

fn enabled(level: Level) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// println! at info level: the loader's lines about what it does.
macro_rules! info {
    ($($arg:tt)*) => {
        if enabled(Level::Info) {
            println!($($arg)*);
        }
    };
}

/// eprintln! at warn level.
macro_rules! warn {
    ($($arg:tt)*) => {
        if enabled(Level::Warn) {
            eprintln!($($arg)*);
        }
    };
}

/// -1: no request, 0: SIGUSR1 (off), 1: SIGUSR2 (on).
static STEAL_REQ: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_steal_signal(sig: libc::c_int) {
    STEAL_REQ.store((sig == libc::SIGUSR2) as i32, Ordering::Relaxed);
}

struct Scheduler<'a> {
    skel: BpfSkel<'a>,
    cost: bool,
    link: Option<libbpf_rs::Link>,
    stats_server: StatsServer<(), Metrics>,
    nr_cpus: usize,
    online: String,
    installed: Tables,
    counters: bool,
}

impl<'a> Scheduler<'a> {
    fn init(opts: &Opts, open_object: &'a mut MaybeUninit<OpenObject>) -> Result<Self> {
        let nr_cpus = libbpf_rs::num_possible_cpus()?;
        if nr_cpus > topo::MAX_CPUS {
            bail!(
                "{nr_cpus} possible CPUs, at most {} supported",
                topo::MAX_CPUS
            );
        }
        let mut builder = BpfSkelBuilder::default();
        builder.obj_builder.debug(opts.verbose);
        let open_opts = opts.libbpf.clone().into_bpf_open_opts();
        let mut skel = scx_ops_open!(builder, open_object, idlesteal_ops, open_opts)
            .context("cannot open the BPF object (see the Libbpf Options in --help)")?;

        let rodata = skel.maps.rodata_data.as_mut().unwrap();
        if let Some(us) = opts.slice_us {
            rodata.slice_ns = us * 1000;
        }
        rodata.slice_min_ns = opts.slice_min_us * 1000;
        rodata.scale_slices = !opts.fixed_slices;
        rodata.wake_preempt = !opts.no_preempt;
        rodata.nr_cpus = nr_cpus as u32;
        // The starvation guard acts at a fifth of the watchdog's limit.
        rodata.timeout_ms = opts.timeout_ms.unwrap_or(0);

        // ops.cgroup_set_idle (6.19+) only where the kernel has it: the BPF
        // object leaves it out of its ops, so that a veristat or libbpf that
        // loads the object as it is does so on older kernels too.  Elsewhere
        // its program is not loaded at all (a struct_ops program in no ops
        // has nothing to attach to: EINVAL).
        let set_idle = compat::struct_has_field("sched_ext_ops", "cgroup_set_idle")?;
        if !set_idle {
            skel.progs.idlesteal_cgroup_set_idle.set_autoload(false);
        }
        let set_idle_prog = skel
            .progs
            .idlesteal_cgroup_set_idle
            .as_libbpf_object()
            .as_ptr();
        let ops = skel.struct_ops.idlesteal_ops_mut();
        if set_idle {
            ops.cgroup_set_idle = set_idle_prog;
        }
        if let Some(ms) = opts.timeout_ms {
            ops.timeout_ms = ms;
        }
        ops.exit_dump_len = opts.exit_dump_len;
        let watchdog_ms = ops.timeout_ms;
        if opts.enq_migration_disabled {
            // 0 on 6.12, which passes them to ops.enqueue() anyway.
            let flag = *compat::SCX_OPS_ENQ_MIGRATION_DISABLED;
            if flag == 0 {
                warn!(
                    "{NAME}: -m: no SCX_OPS_ENQ_MIGRATION_DISABLED on this kernel \
                           (6.12 always passes migration-disabled tasks to ops.enqueue())"
                );
            }
            ops.flags |= flag;
        }

        let online = topo::online()?;
        let tables = Tables::new(&Topology::new()?, nr_cpus).context("cannot read the topology")?;
        install(skel.maps.bss_data.as_mut().unwrap(), &tables);
        info!("topology: {}, online {online}", tables.describe());

        let data = skel.maps.data_data.as_mut().unwrap();
        data.steal_enabled = !opts.off;
        data.enqueue_kick = !opts.no_kick;
        data.kick_whole_core = !opts.any_cpu_kick;
        skel.maps.bss_data.as_mut().unwrap().nearest_llc = opts.nearest_llc;

        let mut skel = scx_ops_load!(skel, idlesteal_ops, uei)?;
        let link = scx_ops_attach!(skel, idlesteal_ops)?;
        let stats_server = StatsServer::new(stats::server_data()).launch()?;
        info!(
            "{NAME}: loaded, stealing {}{}{}{}, watchdog {watchdog_ms} ms, slices {}, \
                  wakeup preemption {}",
            if opts.off { "off" } else { "on" },
            if opts.nearest_llc {
                ", nearest LLC of the node too"
            } else {
                ""
            },
            if opts.no_kick {
                ", no arrival kick"
            } else if opts.any_cpu_kick {
                ", kicks any idle CPU"
            } else {
                ""
            },
            if opts.enq_migration_disabled {
                ", enqueues migration-disabled tasks"
            } else {
                ""
            },
            if opts.fixed_slices { "fixed" } else { "scaled" },
            if opts.no_preempt { "off" } else { "on" }
        );
        Ok(Scheduler {
            skel,
            cost: opts.cost,
            link: Some(link),
            stats_server,
            nr_cpus,
            online,
            installed: tables,
            counters: opts.counters,
        })
    }

    /// Read and install the topology of the CPUs online now if they are not
    /// what was installed, or, with @again, if the tables differ: the cache
    /// information of the other CPUs of a CPU's LLC is updated in steps
    /// around its hotplug, so it is read once more a second after a change.
    /// Ok(true): installed; Ok(false): unchanged; Err: a CPU in the middle
    /// of going on- or offline (tried again at the next tick).
    fn update_topology(&mut self, again: bool) -> Result<bool> {
        let now = topo::online()?;
        if !again && now == self.online {
            return Ok(false);
        }
        let t = Tables::new(&Topology::new()?, self.nr_cpus)?;
        if now == self.online && t == self.installed {
            return Ok(false);
        }
        install(self.skel.maps.bss_data.as_mut().unwrap(), &t);
        info!("hotplug: {}, online {now}", t.describe());
        self.online = now;
        self.installed = t;
        Ok(true)
    }

    fn totals(&self) -> [u64; stats::NR_STATS] {
        let mut totals = [0u64; stats::NR_STATS];
        for (i, total) in totals.iter_mut().enumerate() {
            let key = (i as u32).to_ne_bytes();
            if let Ok(Some(vals)) = self.skel.maps.stats.lookup_percpu(&key, MapFlags::ANY) {
                for v in vals {
                    *total += u64::from_ne_bytes(v[..8].try_into().unwrap());
                }
            }
        }
        totals
    }

    fn steal_on(&self) -> bool {
        self.skel.maps.data_data.as_ref().unwrap().steal_enabled
    }

    fn metrics(&self) -> Metrics {
        Metrics::from_totals(&self.totals(), self.steal_on())
    }

    /// "stats steals=1 failed=2 ... steal=on", parsed by idlesteal/scx/own.py.
    fn print_stats(&self, tag: &str) {
        let mut line = tag.to_string();
        for (name, v) in stats::NAMES.iter().zip(self.totals()) {
            line.push_str(&format!(" {name}={v}"));
        }
        println!(
            "{line} steal={}",
            if self.steal_on() { "on" } else { "off" }
        );
    }

    /// Per CPU: the steal gate's averages (a search is made while
    /// avg_idle >= avg_cost) and the cpufreq target last set (of 1024),
    /// from struct cpu_ctx (src/bpf/intf.h).
    fn print_gates(&self) {
        let key = 0u32.to_ne_bytes();
        let Ok(Some(vals)) = self.skel.maps.cpu_ctxs.lookup_percpu(&key, MapFlags::ANY) else {
            return;
        };
        let mut line = String::from("gate avg_idle_us/avg_cost_us:");
        let mut perf = String::from("perf target/1024:");
        for (cpu, v) in vals.iter().enumerate() {
            if v.len() < std::mem::size_of::<bpf_intf::cpu_ctx>() {
                return;
            }
            // SAFETY: v holds at least one cpu_ctx, a plain C struct of
            // u64s; read_unaligned() needs no alignment of the Vec.
            let c: bpf_intf::cpu_ctx = unsafe { std::ptr::read_unaligned(v.as_ptr().cast()) };
            line.push_str(&format!(
                " {cpu}={}/{}",
                c.avg_idle / 1000,
                c.avg_cost / 1000
            ));
            perf.push_str(&format!(" {cpu}={}", c.perf_lvl));
        }
        println!("{line}");
        println!("{perf}");
    }

    /// --cost: each loaded callback's calls and run time (bpf_prog_info's
    /// run_cnt and run_time_ns), the costliest in total first.
    fn print_costs(&self) {
        let mut rows = Vec::new();
        for prog in self.skel.object().progs() {
            if !prog.autoload() {
                continue;
            }
            // SAFETY: a zeroed bpf_prog_info is valid; the kernel fills
            // at most `len` bytes of it.
            let mut info: libbpf_rs::libbpf_sys::bpf_prog_info = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of_val(&info) as u32;
            let ret = unsafe {
                libbpf_rs::libbpf_sys::bpf_obj_get_info_by_fd(
                    prog.as_fd().as_raw_fd(),
                    (&mut info as *mut libbpf_rs::libbpf_sys::bpf_prog_info).cast(),
                    &mut len,
                )
            };
            let name = prog.name().to_string_lossy();
            let name = name.strip_prefix("idlesteal_").unwrap_or(&name).to_string();
            if ret != 0 {
                warn!(
                    "{NAME}: --cost: no run time for {name}: {}",
                    std::io::Error::last_os_error()
                );
                continue;
            }
            rows.push((info.run_time_ns, info.run_cnt, name));
        }
        rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
        for (ns, cnt, name) in rows {
            let mean = ns.checked_div(cnt).unwrap_or(0);
            println!(
                "cost {name} calls {cnt} mean_ns {mean} total_ms {}",
                ns / 1_000_000
            );
        }
    }

    /// Every 100 ms: the switches, and the online CPUs (CPU hotplug: the
    /// scheduler stays loaded, the tables are rewritten); every second the
    /// counters (with --counters); scx_stats requests as they come.
    fn run(&mut self, shutdown: &AtomicBool) -> Result<UserExitInfo> {
        let (res_ch, req_ch) = self.stats_server.channels();
        let mut settle = 0;
        let mut last_stats = Instant::now();
        if self.counters {
            self.print_stats("stats");
        }
        while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&self.skel, uei) {
            let req = STEAL_REQ.swap(-1, Ordering::Relaxed);
            if req >= 0 {
                self.skel.maps.data_data.as_mut().unwrap().steal_enabled = req == 1;
                info!("{NAME}: stealing {}", if req == 1 { "on" } else { "off" });
            }
            match self.update_topology(settle == 1) {
                Ok(true) => settle = 10,
                Ok(false) if settle > 0 => settle -= 1,
                _ => {}
            }
            if last_stats.elapsed() >= Duration::from_secs(1) {
                if self.counters {
                    self.print_stats("stats");
                }
                last_stats += Duration::from_secs(1);
            }
            match req_ch.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => res_ch.send(self.metrics())?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(e) => Err(e)?,
            }
        }
        self.print_stats("final");
        if enabled(Level::Debug) {
            self.print_gates();
        }
        if self.cost {
            self.print_costs();
        }
        self.link.take();
        uei_report!(&self.skel, uei)
    }
}

/// Write @t into the scheduler's tables: before the load, or while it runs
/// (CPU hotplug).  Its programs bound every index they read, so one that
/// reads during the copy, half old and half new, at worst looks for a task
/// in the wrong queue or misses one: a failed or skipped steal.
fn install(bss: &mut types::bss, t: &Tables) {
    let n = t.cpu_llc.len();
    bss.cpu_llc[..n].copy_from_slice(&t.cpu_llc);
    bss.cpu_pos[..n].copy_from_slice(&t.cpu_pos);
    bss.cpu_nr_siblings[..n].copy_from_slice(&t.cpu_nr_siblings);
    bss.cpu_siblings[..n].copy_from_slice(&t.cpu_siblings);
    for id in 0..topo::MAX_LLCS {
        let cpus = t.llc_cpus.get(id).map(Vec::as_slice).unwrap_or(&[]);
        bss.llc_nr_cpus[id] = cpus.len() as u32;
        bss.llc_node[id] = t.llc_node.get(id).copied().unwrap_or(0);
        bss.llc_cpus[id][..cpus.len()].copy_from_slice(cpus);
    }
    bss.nr_llcs = t.nr_llcs;
}

fn main() {
    let opts = Opts::parse();
    if let Err(e) = run(&opts) {
        eprintln!("{e:#}");
        std::process::exit(1);
    }
}

fn run(opts: &Opts) -> Result<()> {
    if opts.version {
        println!(
            "{NAME} {}",
            scx_utils::build_id::full_version(env!("CARGO_PKG_VERSION"))
        );
        return Ok(());
    }
    if opts.help_stats {
        stats::server_data().describe_meta(&mut std::io::stdout(), None)?;
        return Ok(());
    }
    let level = if opts.verbose {
        Level::Debug
    } else {
        opts.log_level
    };
    LEVEL.store(level as u8, Ordering::Relaxed);
    let level = match level {
        Level::Error => simplelog::LevelFilter::Error,
        Level::Warn => simplelog::LevelFilter::Warn,
        Level::Info => simplelog::LevelFilter::Info,
        Level::Debug => simplelog::LevelFilter::Debug,
    };
    simplelog::TermLogger::init(
        level,
        simplelog::Config::default(),
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Never,
    )?;

    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = shutdown.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .context("cannot set the SIGINT/SIGTERM handler")?;
    // SAFETY: the handler only stores into an atomic.
    unsafe {
        libc::signal(
            libc::SIGUSR1,
            on_steal_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGUSR2,
            on_steal_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }

    if let Some(secs) = opts.monitor.or(opts.stats) {
        let stop = shutdown.clone();
        let monitor = std::thread::spawn(move || {
            if let Err(e) = stats::monitor(Duration::from_secs_f64(secs), stop) {
                warn!("{NAME}: stats monitor: {e:#}");
            }
        });
        if opts.monitor.is_some() {
            let _ = monitor.join();
            return Ok(());
        }
    }

    // --cost: the kernel times BPF programs while this file descriptor is
    // open (BPF_ENABLE_STATS), for the whole run, restarts included.
    let _stats_on = if opts.cost {
        // SAFETY: a plain syscall wrapper; a new file descriptor or -errno.
        let fd = unsafe {
            libbpf_rs::libbpf_sys::bpf_enable_stats(libbpf_rs::libbpf_sys::BPF_STATS_RUN_TIME)
        };
        if fd < 0 {
            bail!(
                "--cost: cannot turn on the BPF run-time statistics: {}",
                std::io::Error::from_raw_os_error(-fd)
            );
        }
        // SAFETY: fd is a new descriptor that nothing else owns.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    } else {
        None
    };

    let mut open_object = MaybeUninit::uninit();
    loop {
        let mut sched = Scheduler::init(opts, &mut open_object)?;
        let uei = sched.run(&shutdown)?;
        // A CPU change between opening and attaching (ops.hotplug_seq).
        if !uei.should_restart() {
            return Ok(());
        }
        info!("{NAME}: restarting (topology changed)");
    }
}
