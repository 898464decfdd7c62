// Jobs of hoop_test_worker ranks (tests/core/worker.cc) joined through a unique id made by the
// test, and the verdict every rank must give. For the test binaries that launch that worker: they
// define HOOP_TEST_WORKER as its path.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "hoop/hoop.h"
#include "process_runner.h"

#ifndef HOOP_TEST_WORKER
#error "worker_job.h needs HOOP_TEST_WORKER, the path of hoop_test_worker"
#endif

namespace hoop::test {

using Env = std::map<std::string, std::string>;

// Every rank exited 0 and said "OK rank".
inline void expectAllPassed(const std::vector<ProcessResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].status, 0) << "process " << r << " output:\n" << results[r].output;
    if (results[r].status == 0) {
      EXPECT_NE(results[r].output.find("OK rank"), std::string::npos);
    }
  }
}

// What a worker started with --init uid reads: the job's unique id, its rank and the job's size.
inline Env joining(const hoopUniqueId& id, int rank, int nranks) {
  return {{"HOOP_TEST_UID", toHex(id)},
          {"HOOP_TEST_RANK", std::to_string(rank)},
          {"HOOP_TEST_NRANKS", std::to_string(nranks)}};
}

// Starts nranks workers that join through a unique id made here; `perRank` adds to (or overrides)
// `env` for one rank.
inline std::vector<ProcessResult> runWithUniqueId(int nranks, const std::vector<std::string>& args,
                                                  Env env = {}, int timeoutSeconds = 300,
                                                  const std::vector<Env>& perRank = {}) {
  hoopUniqueId id;
  EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess) << hoopGetLastError(nullptr);
  ProcessGroup group;
  for (int r = 0; r < nranks; ++r) {
    Env rankEnv = joining(id, r, nranks);
    if (static_cast<size_t>(r) < perRank.size()) {
      for (const auto& [name, value] : perRank[static_cast<size_t>(r)]) rankEnv[name] = value;
    }
    Env shared = env;
    rankEnv.merge(shared);  // what the rank's own entries already set stays
    std::vector<std::string> argv = {HOOP_TEST_WORKER, "--init", "uid"};
    argv.insert(argv.end(), args.begin(), args.end());
    group.start(argv, rankEnv);
  }
  return group.wait(std::chrono::seconds(timeoutSeconds));
}

}  // namespace hoop::test
