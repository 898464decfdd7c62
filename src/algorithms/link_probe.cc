// Measures one link with the point-to-point path every hoop program uses (runP2pGroup): each
// timing is a group of sends and receives, so the figures include hoop's framing, piece size and
// the transport the pair was given, exactly as a collective would see them.

#include "algorithms/link_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/team.h"
#include "base/clock.h"
#include "base/env.h"
#include "base/error.h"

namespace hoop {

namespace {

// A well-mixed 64-bit value of x (the splitmix64 finaliser): neighbouring words, messages and
// senders get unrelated patterns.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t patternWord(uint64_t seed, int sender, uint64_t message, uint64_t word) {
  return mix(seed ^ mix((static_cast<uint64_t>(sender) << 40) ^ (message << 20) ^ mix(word)));
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The value below which a fraction `q` of the sorted samples lie (nearest rank).
double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto index = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
  return samples[std::min(samples.size() - 1, index == 0 ? 0 : index - 1)];
}

// One rank's half of the probe, sent to the other at the end so both report the same figures.
struct Timings {
  double sendSeconds = 0;   // its one-way send, until the peer's acknowledgement
  double bidirSeconds = 0;  // its part of the exchange both ways
  double latencyP50Us = 0;  // measured by the lower rank only
  double latencyP99Us = 0;
};

class Probe {
 public:
  Probe(Team& team, int peer, const LinkProbeOptions& options)
      : team_(team),
        self_(team.rank()),
        peer_(peer),
        options_(options),
        hook_(flipByteHook()),
        outgoing_(static_cast<size_t>(options.messages)),
        incoming_(static_cast<size_t>(options.messages)) {
    for (int m = 0; m < options.messages; ++m) {
      auto& out = outgoing_[static_cast<size_t>(m)];
      out.resize(options.messageBytes);
      fillPattern(out, options.patternSeed, self_, static_cast<uint64_t>(m));
      if (hook_.rank == self_ && hook_.offset < out.size()) out[hook_.offset] ^= 0xff;
      incoming_[static_cast<size_t>(m)].resize(options.messageBytes);
    }
  }

  LinkProbe run() {
    const bool lower = self_ < peer_;
    Timings mine;
    measureLatency(lower, mine);
    // One way, the lower rank first; then back.
    for (int sender : {std::min(self_, peer_), std::max(self_, peer_)}) {
      handshake();
      if (sender == self_) {
        const Clock::time_point start = Clock::now();
        exchange(/*send=*/true, /*receive=*/false);
        acknowledgement(/*send=*/false);
        mine.sendSeconds = secondsSince(start);
      } else {
        exchange(/*send=*/false, /*receive=*/true);
        acknowledgement(/*send=*/true);
        verifyReceived();
      }
    }
    if (options_.bidirectional) {
      handshake();
      const Clock::time_point start = Clock::now();
      exchange(/*send=*/true, /*receive=*/true);
      mine.bidirSeconds = secondsSince(start);
      verifyReceived();
    }
    const Timings theirs = swap(mine);

    LinkProbe result;
    result.self = self_;
    result.peer = peer_;
    const Timings& lowerSide = lower ? mine : theirs;
    const Timings& higherSide = lower ? theirs : mine;
    result.lowerToHigherGBps = gigabytesPerSecond(totalBytes(), lowerSide.sendSeconds);
    result.higherToLowerGBps = gigabytesPerSecond(totalBytes(), higherSide.sendSeconds);
    if (options_.bidirectional) {
      result.bidirectionalGBps = gigabytesPerSecond(
          2 * totalBytes(), std::max(lowerSide.bidirSeconds, higherSide.bidirSeconds));
    }
    result.latencyP50Us = lowerSide.latencyP50Us;
    result.latencyP99Us = lowerSide.latencyP99Us;
    result.received = received_;
    return result;
  }

 private:
  double totalBytes() const {
    return static_cast<double>(options_.messageBytes) * static_cast<double>(options_.messages);
  }
  static double gigabytesPerSecond(double bytes, double seconds) {
    return seconds > 0 ? bytes / seconds / 1e9 : 0;
  }

  void group(std::vector<P2pOp> ops) { runP2pGroup(team_, ops); }
  P2pOp op(bool isSend, void* buffer, size_t bytes) const {
    return P2pOp{.isSend = isSend,
                 .peer = peer_,
                 .buffer = buffer,
                 .count = bytes,
                 .type = DataType::kUint8};
  }

  // 8-byte round trips started by the lower rank; the first few warm the path and are dropped.
  void measureLatency(bool lower, Timings& mine) {
    const int warmup = 2;
    uint64_t word = 0;
    std::vector<double> oneWayUs;
    for (int i = 0; i < warmup + options_.latencyRoundTrips; ++i) {
      if (lower) {
        const Clock::time_point start = Clock::now();
        group({op(true, &word, sizeof word)});
        group({op(false, &word, sizeof word)});
        if (i >= warmup) oneWayUs.push_back(secondsSince(start) * 1e6 / 2);
      } else {
        group({op(false, &word, sizeof word)});
        group({op(true, &word, sizeof word)});
      }
    }
    mine.latencyP50Us = percentile(oneWayUs, 0.5);
    mine.latencyP99Us = percentile(oneWayUs, 0.99);
  }

  // Both ranks leave it within a one-way trip of each other, so a timing starts together.
  void handshake() {
    uint64_t out = 0;
    uint64_t in = 0;
    group({op(true, &out, sizeof out), op(false, &in, sizeof in)});
  }

  void acknowledgement(bool send) {
    uint64_t word = 0;
    group({op(send, &word, sizeof word)});
  }

  // All messages at once, so the link is kept full. The received ones are checked after the
  // timing (verifyReceived), so the check's own cost is not counted as the link's.
  void exchange(bool send, bool receive) {
    std::vector<P2pOp> ops;
    for (size_t m = 0; m < outgoing_.size(); ++m) {
      if (send) ops.push_back(op(true, outgoing_[m].data(), options_.messageBytes));
      if (receive) ops.push_back(op(false, incoming_[m].data(), options_.messageBytes));
    }
    group(std::move(ops));
  }

  void verifyReceived() {
    for (size_t m = 0; m < incoming_.size() && received_.ok; ++m) {
      received_ = checkPattern(incoming_[m], options_.patternSeed, peer_, m,
                               static_cast<int64_t>(receivedMessages_ + m));
    }
    // Zeroed, so a message that never arrives in the next exchange cannot pass as this one.
    for (std::vector<uint8_t>& message : incoming_) std::fill(message.begin(), message.end(), 0);
    receivedMessages_ += incoming_.size();
  }

  Timings swap(const Timings& mine) {
    Timings theirs;
    group({op(true, const_cast<Timings*>(&mine), sizeof mine), op(false, &theirs, sizeof theirs)});
    return theirs;
  }

  Team& team_;
  const int self_;
  const int peer_;
  const LinkProbeOptions& options_;
  const FlipByteHook hook_;
  std::vector<std::vector<uint8_t>> outgoing_;
  std::vector<std::vector<uint8_t>> incoming_;
  PatternCheck received_;
  size_t receivedMessages_ = 0;
};

}  // namespace

std::string PatternCheck::describe() const {
  if (ok) return "data intact";
  char bytes[32];
  std::snprintf(bytes, sizeof bytes, "expected 0x%02x, got 0x%02x", expected, actual);
  return str("wrong byte in message ", message, " at offset ", offset, ": ", bytes);
}

void fillPattern(std::span<uint8_t> bytes, uint64_t seed, int sender, uint64_t message) {
  const size_t words = bytes.size() / 8;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t value = patternWord(seed, sender, message, w);
    std::memcpy(bytes.data() + w * 8, &value, 8);
  }
  if (words * 8 < bytes.size()) {
    const uint64_t value = patternWord(seed, sender, message, words);
    std::memcpy(bytes.data() + words * 8, &value, bytes.size() - words * 8);
  }
}

PatternCheck checkPattern(std::span<const uint8_t> bytes, uint64_t seed, int sender,
                          uint64_t message, int64_t messageIndex) {
  const size_t words = (bytes.size() + 7) / 8;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t want = patternWord(seed, sender, message, w);
    const size_t length = std::min<size_t>(8, bytes.size() - w * 8);
    if (std::memcmp(bytes.data() + w * 8, &want, length) == 0) continue;
    uint8_t wanted[8];
    std::memcpy(wanted, &want, 8);
    for (size_t b = 0; b < length; ++b) {
      if (bytes[w * 8 + b] == wanted[b]) continue;
      return PatternCheck{.ok = false,
                          .message = messageIndex,
                          .offset = static_cast<int64_t>(w * 8 + b),
                          .expected = wanted[b],
                          .actual = bytes[w * 8 + b]};
    }
  }
  return PatternCheck{};
}

FlipByteHook flipByteHook() {
  const std::optional<std::string> text = envString("HOOP_TEST_FLIP_BYTE");
  if (!text || text->empty()) return {};
  const size_t colon = text->find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    size_t used = 0;
    const int rank = std::stoi(text->substr(0, colon), &used);
    if (used != colon || rank < 0) throw std::invalid_argument("rank");
    const std::string offsetText = text->substr(colon + 1);
    const unsigned long long offset = std::stoull(offsetText, &used);
    if (used != offsetText.size()) throw std::invalid_argument("offset");
    return FlipByteHook{.rank = rank, .offset = static_cast<size_t>(offset)};
  } catch (const std::exception&) {
    fail(hoopInvalidArgument, "HOOP_TEST_FLIP_BYTE='", *text,
         "' is not RANK:OFFSET (a rank and a byte offset)");
  }
}

LinkProbe probeLink(Team& team, int peer, const LinkProbeOptions& options) {
  if (peer < 0 || peer >= team.size() || peer == team.rank()) {
    fail(hoopInvalidArgument, "rank ", team.rank(), ": cannot probe the link to rank ", peer,
         " (another rank of ", team.size(), " is needed)");
  }
  if (options.messages < 1 || options.messageBytes == 0 || options.latencyRoundTrips < 1) {
    fail(hoopInvalidArgument, "rank ", team.rank(), ": a link probe needs at least one message",
         " of at least one byte and one round trip");
  }
  return Probe(team, peer, options).run();
}

}  // namespace hoop
