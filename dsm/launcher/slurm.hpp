// Inside a Slurm allocation, dsmrun takes its hosts from Slurm and starts ranks with srun.
// This part reads the allocation: which nodes, how many tasks each may run, and which node
// each rank goes to.
#pragma once

#include <string>
#include <vector>

namespace dsm::slurm {

// SLURM_JOB_ID and SLURM_JOB_NODELIST are set: this process runs inside salloc or sbatch.
bool in_allocation();

// Slurm's compressed counts, "2(x3),1" -> {2, 2, 2, 1}. Throws std::invalid_argument naming
// the text when it is malformed.
std::vector<int> expand_counts(const std::string& counts);

// The host of each of n ranks in Slurm's block order: the first slots[0] ranks on nodes[0],
// the next slots[1] on nodes[1], and so on. Throws std::runtime_error when n is more than
// the slots add up to (the message says how many the allocation allows), or when nodes and
// slots differ in length.
std::vector<std::string> place_ranks(int n, const std::vector<std::string>& nodes, const std::vector<int>& slots);

// place_ranks over this allocation: nodes from SLURM_JOB_NODELIST (expanded by `scontrol
// show hostnames`), slots from SLURM_TASKS_PER_NODE (or SLURM_JOB_CPUS_PER_NODE).
std::vector<std::string> allocation_hosts(int n);

}  // namespace dsm::slurm
