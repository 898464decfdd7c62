// One link between two ranks, measured with hoop's own point-to-point path (runP2pGroup), so a
// figure is what a collective over that link would get: latency (8-byte round trips, p50 and
// p99), bandwidth one way in each direction and both ways at once, and a check of every byte
// that crossed (a pattern each side can regenerate, so a wrong byte is reported with its place).
//
// Both ranks of a pair call probeLink with each other as the peer, with the same options; pairs
// that share no rank may probe at the same time (the cross-host rounds of hoop-validate do).
// Every exchange is an operation of its own, bounded by HOOP_TIMEOUT and the abort: a dead peer
// or a link that went down is a hoop::Error naming the peer, never a hang. Both ranks return the
// same figures (they swap what each timed at the end); the data checks are each rank's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace hoop {

class Team;

struct LinkProbeOptions {
  size_t messageBytes = size_t{1} << 20;  // each bandwidth message
  int messages = 4;                       // messages per bandwidth timing
  int latencyRoundTrips = 32;
  bool bidirectional = true;
  // Changes the pattern from call to call, so a stale buffer cannot pass for a fresh one. Both
  // ranks must pass the same.
  uint64_t patternSeed = 0;
};

// What the data check found in the messages one rank received.
struct PatternCheck {
  bool ok = true;
  // The first wrong byte: which message (in the order received), its offset in that message,
  // and what it should have been and was.
  int64_t message = -1;
  int64_t offset = -1;
  uint8_t expected = 0;
  uint8_t actual = 0;

  std::string describe() const;
};

struct LinkProbe {
  int self = -1;
  int peer = -1;
  // GB/s (1e9 bytes per second). "Lower to higher": from the pair's lower rank to its higher.
  double lowerToHigherGBps = 0;
  double higherToLowerGBps = 0;
  double bidirectionalGBps = 0;  // both directions together; 0 when not measured
  // One-way latency, half a round trip, in microseconds.
  double latencyP50Us = 0;
  double latencyP99Us = 0;
  // The data this rank received from the peer.
  PatternCheck received;

  // This rank's sending and receiving bandwidth (one way).
  double sendGBps() const { return self < peer ? lowerToHigherGBps : higherToLowerGBps; }
  double recvGBps() const { return self < peer ? higherToLowerGBps : lowerToHigherGBps; }
};

// Collective over the two ranks `team.rank()` and `peer` (both call it). Throws hoop::Error on
// a peer that fails, the time-out, the abort, or `peer` not being another rank of the team.
LinkProbe probeLink(Team& team, int peer, const LinkProbeOptions& options);

// The pattern message `message` from `sender` carries for `seed`: 64-bit words of a mixing
// function of (seed, sender, message, word index), so a byte shifted, repeated, zeroed or
// flipped anywhere in it, or a message from another sender or call, fails the check.
void fillPattern(std::span<uint8_t> bytes, uint64_t seed, int sender, uint64_t message);
// The first byte of `bytes` that differs from that pattern (ok when none does); `messageIndex`
// is recorded in the result as given.
PatternCheck checkPattern(std::span<const uint8_t> bytes, uint64_t seed, int sender,
                          uint64_t message, int64_t messageIndex);

// HOOP_TEST_FLIP_BYTE ("RANK:OFFSET"), a test-only hook: on rank RANK, every probe message sent
// has the byte at OFFSET flipped after the pattern is written, so the data check can be shown
// to catch corruption. Read on each call; disabled (rank -1) when unset.
struct FlipByteHook {
  int rank = -1;
  size_t offset = 0;
};
FlipByteHook flipByteHook();

}  // namespace hoop
