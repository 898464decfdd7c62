// The argv and environment a test hands to exec in a forked child, built before the fork: a
// test process may have other threads (a rendezvous root), and after fork only
// async-signal-safe calls are allowed (a child that allocates may wait forever on an allocator
// lock another thread held at the fork).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace hoop::test {

class ExecImage {
 public:
  // This process's environment without `dropped` and the names in `overrides`, then
  // `overrides` (NAME=value) appended.
  ExecImage(std::vector<std::string> argv, const std::map<std::string, std::string>& overrides,
            const std::set<std::string>& dropped = {})
      : args_(std::move(argv)) {
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string text = *entry;
      const std::string name = text.substr(0, text.find('='));
      if (dropped.count(name) == 0 && overrides.count(name) == 0) env_.push_back(std::move(text));
    }
    for (const auto& [name, value] : overrides) env_.push_back(name + "=" + value);
    // Pointers last: the strings no longer move.
    for (std::string& arg : args_) argp_.push_back(arg.data());
    argp_.push_back(nullptr);
    for (std::string& text : env_) envp_.push_back(text.data());
    envp_.push_back(nullptr);
  }
  // The pointers point into this object's strings.
  ExecImage(const ExecImage&) = delete;
  ExecImage& operator=(const ExecImage&) = delete;

  char* const* argv() const { return argp_.data(); }
  char* const* envp() const { return envp_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<std::string> env_;
  std::vector<char*> argp_;
  std::vector<char*> envp_;
};

}  // namespace hoop::test
