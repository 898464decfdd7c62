// A fresh directory for one test's files, removed with everything in it at scope end: no two
// tests (or runs) share a path, and nothing is left behind in $TMPDIR.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace hoop::test {

class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && base[0] != 0 ? base : "/tmp") + "/hoop-test-scratch.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/relative, not created.
  std::string file(const std::string& relative) const {
    return (std::filesystem::path(path_) / relative).string();
  }
  // Writes `text` to path()/relative, creating the folders on the way; returns the full path.
  std::string write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path full = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full) << text;
    return full.string();
  }

 private:
  std::string path_;
};

}  // namespace hoop::test
