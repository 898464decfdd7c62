// A PMIx client, for rendezvous under launchers that run a PMIx server (OpenMPI's mpirun, PRRTE,
// Slurm's srun --mpi=pmix). libpmix is loaded with dlopen on first use: hoop links nothing PMIx
// and runs unchanged where it is absent. The few types hoop passes across are declared in
// pmix_abi.h after the PMIx standard's ABI (which has kept them fixed since version 2).
#pragma once

#include <memory>
#include <string>

namespace hoop {

// Whether this process was started by a PMIx server (the server's variables are set); says
// nothing of whether libpmix can be loaded.
bool pmixServerPresent();

class PmixClient {
 public:
  // Connects to the launcher's PMIx server; nullptr when the library cannot be loaded or the
  // server refuses, with `why` saying which.
  static std::unique_ptr<PmixClient> connect(std::string& why);
  ~PmixClient();  // PMIx_Finalize: the library counts initialisations, so a program's own stays
  PmixClient(const PmixClient&) = delete;
  PmixClient& operator=(const PmixClient&) = delete;

  int rank() const { return rank_; }
  const std::string& jobName() const { return namespace_; }

  // Publishes key=value to every process of the job (PMIx_Put, PMIx_Commit).
  void publish(const std::string& key, const std::string& value);
  // Waits for every process of the job (PMIx_Fence): what each published before is visible after.
  void fence();
  // The value `rank` of this job published under `key`.
  std::string lookup(int rank, const std::string& key);

 private:
  PmixClient() = default;

  std::string namespace_;
  int rank_ = -1;
};

}  // namespace hoop
