#include "test_support.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "exec_image.h"

namespace hoop::test {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string fixture(const std::string& name) {
  return std::string(HOOP_TOPO_FIXTURES) + "/" + name;
}

RunResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  ScratchDir scratch;
  std::string outPath = scratch.path() + "/out";
  std::string errPath = scratch.path() + "/err";

  // Only async-signal-safe calls after the fork: the image is built before it.
  const ExecImage image(argv, env, {"HOOP_TOPO_FILE", "HOOP_TRANSPORT"});

  pid_t pid = fork();
  if (pid == 0) {
    int out = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    execve(image.argv()[0], image.argv(), image.envp());
    _exit(127);
  }
  RunResult result;
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return result;
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  result.out = readFile(outPath);
  result.err = readFile(errPath);
  return result;
}

}  // namespace hoop::test
