#include "hooprun/launch_context.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <system_error>

#include "hooprun/cpu_binding.h"
#include "hooprun/fd.h"
#include "hooprun/remote_command.h"

extern char** environ;

namespace hoop::run {
namespace {

[[noreturn]] void throwErrno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

std::string hexEncode(const unsigned char* bytes, size_t size) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

std::string makeSecret() {
  unsigned char bytes[16];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    // Requests up to 256 bytes never return short once the pool is initialised, but a signal can
    // interrupt the wait for initialisation early in boot.
    ssize_t n = ::getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throwErrno("getrandom");
    }
    filled += static_cast<size_t>(n);
  }
  return hexEncode(bytes, sizeof(bytes));
}

uint16_t pickFreePort(bool loopback_only) {
  UniqueFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) throwErrno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
  if (::bind(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    throwErrno("bind");
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throwErrno("getsockname");
  }
  return ntohs(addr.sin_port);
}

LaunchContext currentLaunchContext(bool loopback_only) {
  LaunchContext ctx;
  ctx.secret = makeSecret();
  ctx.root_port = pickFreePort(loopback_only);
  for (char** e = environ; *e != nullptr; ++e) ctx.environ.emplace_back(*e);
  if (char* cwd = ::getcwd(nullptr, 0)) {
    ctx.cwd = cwd;
    std::free(cwd);
  } else {
    throwErrno("getcwd");
  }
  ctx.rsh = remoteShellCommand(std::getenv("HOOP_RSH"));
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) throwErrno("gethostname");
  ctx.local_hostname = name;
  ctx.cores = usableCores();
  return ctx;
}

}  // namespace hoop::run
