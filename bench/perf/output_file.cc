#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hoop::perf {
namespace {

std::string errnoText(int error) { return std::strerror(error); }

// The directory path lives in: "." for a bare name, "/" for a file in the root.
std::string directoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Closes the descriptor and removes the temporary file unless commit() ran: every early return
// of writeFileAtomically cleans up without repeating itself.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path)
      : path_(std::move(path)),
        fd_(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {}
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && fd_ != kNeverOpened) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Closes the file (reporting a failed close: that can be where a write error shows up).
  bool close() {
    const int fd = fd_;
    fd_ = kClosed;
    return ::close(fd) == 0;
  }
  void commit() { committed_ = true; }

 private:
  static constexpr int kNeverOpened = -1;  // open's failure value: nothing to remove
  static constexpr int kClosed = -2;
  std::string path_;
  int fd_ = kNeverOpened;
  bool committed_ = false;
};

}  // namespace

std::string checkOutputPath(const std::string& path) {
  if (path.empty()) return "an empty file name";
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return path + " is a directory";
  const std::string directory = directoryOf(path);
  if (::stat(directory.c_str(), &info) != 0) {
    return path + ": directory " + directory + ": " + errnoText(errno);
  }
  if (!S_ISDIR(info.st_mode)) return path + ": " + directory + " is not a directory";
  if (::access(directory.c_str(), W_OK) != 0) {
    return path + ": directory " + directory + " is not writable: " + errnoText(errno);
  }
  return "";
}

std::string writeFileAtomically(const std::string& path, std::string_view content) {
  TemporaryFile file(path + ".tmp");
  if (file.fd() < 0) return "cannot create " + file.path() + ": " + errnoText(errno);
  for (size_t written = 0; written < content.size();) {
    const ssize_t n = ::write(file.fd(), content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "cannot write " + file.path() + ": " + errnoText(errno);
    written += static_cast<size_t>(n);
  }
  // On disk before the rename, so a crash right after cannot leave FILE empty.
  if (::fsync(file.fd()) != 0) return "cannot flush " + file.path() + ": " + errnoText(errno);
  if (!file.close()) return "cannot close " + file.path() + ": " + errnoText(errno);
  if (::rename(file.path().c_str(), path.c_str()) != 0) {
    return "cannot rename " + file.path() + " to " + path + ": " + errnoText(errno);
  }
  file.commit();
  return "";
}

}  // namespace hoop::perf
