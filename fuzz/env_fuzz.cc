// Fuzzes the grammars hoop reads from its environment: byte sizes (HOOP_CHUNK_SIZE and friends),
// HOOP_SOCKET_IFNAME, HOOP_TRANSPORT and HOOP_SECRET. The input is split at NUL bytes into the
// texts; SocketAddress::parse is left out because it resolves host names (network traffic).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/error.h"
#include "base/secret.h"
#include "transport/tcp/interfaces.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

// What parseByteSize promises: digits, then at most one of K/M/G (either case), fitting 64 bits.
std::optional<size_t> expectedByteSize(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || text.size() > digits + 1) return std::nullopt;
  unsigned shift = 0;
  if (text.size() == digits + 1) {
    switch (text[digits]) {
      case 'K':
      case 'k': shift = 10; break;
      case 'M':
      case 'm': shift = 20; break;
      case 'G':
      case 'g': shift = 30; break;
      default: return std::nullopt;
    }
  }
  unsigned long long value = 0;
  for (size_t i = 0; i < digits; ++i) {
    unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (value > (~0ULL - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (shift != 0 && value > (~0ULL >> shift)) return std::nullopt;
  return static_cast<size_t>(value << shift);
}

}  // namespace
}  // namespace hoop

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> texts(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      texts.emplace_back();
    } else {
      texts.back() += static_cast<char>(data[i]);
    }
  }
  texts.resize(std::max<size_t>(texts.size(), 4));

  hoop::check(hoop::parseByteSize(texts[0]) == hoop::expectedByteSize(texts[0]));

  hoop::InterfaceFilter filter(texts[1]);
  filter.accepts(texts[2]);
  hoop::check(filter.spec() == texts[1]);

  try {
    auto policy = hoop::TransportPolicy::parse(texts[3]);
    hoop::check(policy.text() == texts[3]);
  } catch (const hoop::Error& e) {
    hoop::check(e.code() == hoopInvalidArgument);
  }

  if (auto secret = hoop::Secret::fromHex(texts[0])) {
    hoop::check(hoop::Secret::fromHex(secret->toHex())->bytes == secret->bytes);
  }
  return 0;
}
