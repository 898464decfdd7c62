// Helpers shared by the topology tests: fixture paths, environment variables set for one test,
// scratch directories, and running a program with its output captured.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scoped_env.h"
#include "scratch_dir.h"

namespace hoop::test {

// Path of a file in tests/topology/fixtures.
std::string fixture(const std::string& name);

struct RunResult {
  int exitCode = -1;  // -1 when the program did not exit normally
  std::string out;
  std::string err;
};

// Runs `argv` with the environment of this process minus HOOP_TOPO_FILE and HOOP_TRANSPORT,
// plus `env` (so a developer's own settings cannot change what a test sees).
RunResult run(const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env = {});

}  // namespace hoop::test
