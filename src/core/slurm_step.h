// What a Slurm job step says about itself without any PMIx: the hosts it runs on, in Slurm's
// hostlist notation, and its job and step ids, from which every rank derives the same root.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hoop {

// The host names a Slurm hostlist stands for, in order: "node[01-03,7],login2" is node01,
// node02, node03, node7, login2. Several bracket groups in one name multiply out
// ("r[1-2]n[1-2]" is r1n1, r1n2, r2n1, r2n2); each range keeps its own lower bound's zero padding.
// Malformed text (unbalanced brackets, a range that runs backwards, a list that would name
// more than a million hosts) is hoopInvalidArgument quoting it.
std::vector<std::string> expandSlurmHostlist(const std::string& hostlist);

// The port rank 0 listens on for a step's rendezvous: the same on every rank of the step,
// different for steps running side by side (the 16 steps after any step of a job, and jobs
// whose ids are less than 798 apart), and inside 20000..32767, below Linux's ephemeral ports.
uint16_t slurmRendezvousPort(uint64_t jobId, uint64_t stepId);

struct SlurmStepRoot {
  std::string host;  // the step's first host, where rank 0 runs under Slurm's distributions
  uint16_t port = 0;
  uint64_t jobId = 0;
  uint64_t stepId = 0;
};

// From SLURM_STEP_NODELIST, SLURM_JOB_ID and SLURM_STEP_ID; a missing or malformed variable is
// hoopInvalidArgument naming it.
SlurmStepRoot slurmStepRoot();

}  // namespace hoop
