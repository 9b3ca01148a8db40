// SPDX-License-Identifier: GPL-2.0
//
// The scheduler's topology tables (src/bpf/main.bpf.c: cpu_llc, llc_cpus,
// cpu_siblings, ...), built from scx_utils' view of the online CPUs.  They
// are rewritten in place when the online CPUs change (CPU hotplug), so the
// scheduler stays loaded where scx_utils' schedulers restart.
use anyhow::{Result, bail};
use scx_utils::Topology;

use crate::bpf_intf;

pub const MAX_CPUS: usize = bpf_intf::MAX_CPUS as usize;
pub const MAX_LLCS: usize = bpf_intf::MAX_LLCS as usize;
pub const MAX_LLC_CPUS: usize = bpf_intf::MAX_LLC_CPUS as usize;
pub const MAX_SIBLINGS: usize = bpf_intf::MAX_SIBLINGS as usize;

#[derive(Clone, PartialEq, Eq)]
pub struct Tables {
    pub nr_llcs: u32,
    pub cpu_llc: Vec<u32>,
    pub cpu_pos: Vec<u32>,
    pub cpu_nr_siblings: Vec<u32>,
    pub cpu_siblings: Vec<[u32; MAX_SIBLINGS]>,
    pub llc_cpus: Vec<Vec<u32>>,
    pub llc_node: Vec<u32>,
}

impl Tables {
    /// The tables of the CPUs in @topo (scx_utils lists online CPUs only);
    /// LLCs numbered in the order of their lowest CPU, offline CPUs in none
    /// (MAX_LLCS), SMT siblings those of the CPU's core.
    pub fn new(topo: &Topology, nr_cpus: usize) -> Result<Self> {
        let mut t = Tables {
            nr_llcs: 0,
            cpu_llc: vec![MAX_LLCS as u32; nr_cpus],
            cpu_pos: vec![0; nr_cpus],
            cpu_nr_siblings: vec![0; nr_cpus],
            cpu_siblings: vec![[0; MAX_SIBLINGS]; nr_cpus],
            llc_cpus: Vec::new(),
            llc_node: Vec::new(),
        };
        let mut ids: Vec<usize> = Vec::new(); // our LLC id -> scx_utils' llc_id
        for (&cpu, c) in topo.all_cpus.iter() {
            if cpu >= nr_cpus {
                bail!("CPU {cpu} is beyond the {nr_cpus} possible CPUs");
            }
            let id = match ids.iter().position(|&l| l == c.llc_id) {
                Some(id) => id,
                None => {
                    if ids.len() == MAX_LLCS {
                        bail!("more than {MAX_LLCS} LLCs");
                    }
                    ids.push(c.llc_id);
                    t.llc_cpus.push(Vec::new());
                    t.llc_node.push(c.node_id as u32);
                    ids.len() - 1
                }
            };
            let n = t.llc_cpus[id].len();
            if n == MAX_LLC_CPUS {
                bail!("more than {MAX_LLC_CPUS} CPUs in an LLC");
            }
            t.cpu_llc[cpu] = id as u32;
            t.cpu_pos[cpu] = n as u32;
            t.llc_cpus[id].push(cpu as u32);

            let mut k = 0;
            if let Some(core) = topo.all_cores.get(&c.core_id) {
                for &sib in core.cpus.keys() {
                    if sib != cpu && k < MAX_SIBLINGS {
                        t.cpu_siblings[cpu][k] = sib as u32;
                        k += 1;
                    }
                }
            }
            t.cpu_nr_siblings[cpu] = k as u32;
        }
        t.nr_llcs = ids.len() as u32;
        Ok(t)
    }

    /// The number of CPUs of each LLC (the BPF side's llc_nr_cpus).
    pub fn llc_nr_cpus(&self) -> Vec<u32> {
        self.llc_cpus.iter().map(|c| c.len() as u32).collect()
    }

    /// "2 LLCs: 4 CPUs (node 0) 4 CPUs (node 1)"
    pub fn describe(&self) -> String {
        let mut s = format!("{} LLCs:", self.nr_llcs);
        for (n, node) in self.llc_nr_cpus().iter().zip(&self.llc_node) {
            s.push_str(&format!(" {n} CPUs (node {node})"));
        }
        s
    }
}

/// The online CPU list as sysfs writes it, trimmed ("0-7").
pub fn online() -> Result<String> {
    Ok(std::fs::read_to_string("/sys/devices/system/cpu/online")?
        .trim()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scx_utils::testutils::make_test_topo;

    /// 2 nodes x 2 LLCs x 2 cores x 2 threads (the 4llc preset's shape).
    #[test]
    fn tables_of_two_nodes_of_two_llcs() {
        let (topo, nr) = make_test_topo(2, 2, 2, 2);
        let t = Tables::new(&topo, nr).unwrap();
        assert_eq!(t.nr_llcs, 4);
        assert_eq!(t.llc_nr_cpus(), vec![4, 4, 4, 4]);
        assert_eq!(t.llc_node, vec![0, 0, 1, 1]);
        assert_eq!(t.llc_cpus[1], vec![4, 5, 6, 7]);
        assert_eq!(t.cpu_llc[5], 1);
        assert_eq!(t.cpu_pos[5], 1);
        assert_eq!(t.cpu_nr_siblings[5], 1);
        assert_eq!(t.cpu_siblings[5][0], 4);
        assert_eq!(
            t.describe(),
            "4 LLCs: 4 CPUs (node 0) 4 CPUs (node 0) 4 CPUs (node 1) 4 CPUs (node 1)"
        );
    }

    /// Possible CPUs that are not in the topology (offline) belong to no LLC.
    #[test]
    fn cpus_beyond_the_topology_are_in_no_llc() {
        let (topo, nr) = make_test_topo(1, 1, 2, 2);
        let t = Tables::new(&topo, nr + 2).unwrap();
        assert_eq!(t.cpu_llc[nr..], [MAX_LLCS as u32, MAX_LLCS as u32]);
        assert_eq!(t.llc_nr_cpus(), vec![4]);
    }

    /// A machine of more than 512 CPUs: 2 nodes x 16 LLCs x 24 cores x 2
    /// threads (1536 CPUs, 32 LLCs).
    #[test]
    fn tables_of_a_machine_of_1536_cpus() {
        let (topo, nr) = make_test_topo(2, 16, 24, 2);
        assert_eq!(nr, 1536);
        let t = Tables::new(&topo, nr).unwrap();
        assert_eq!(t.nr_llcs, 32);
        assert_eq!(t.llc_nr_cpus(), vec![48; 32]);
        assert_eq!(t.llc_node[31], 1);
        assert_eq!(t.cpu_llc[nr - 1], 31);
        assert_eq!(t.cpu_pos[nr - 1], 47);
    }

    /// A topology with more CPUs than the possible ones is refused.
    #[test]
    fn more_cpus_than_possible_is_an_error() {
        let (topo, nr) = make_test_topo(1, 1, 2, 2);
        assert!(Tables::new(&topo, nr - 1).is_err());
    }
}
