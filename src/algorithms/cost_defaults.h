// Every constant of the cost model (tuner.h), named, with its default, in one table. The link
// figures and the reduction's rate are what calibration at init (HOOP_TUNE_CALIBRATE=1) or
// HOOP_TUNE_SHM/TCP/REDUCE replace; the factors say how a schedule's messages and bytes move
// against the plain alpha-beta terms, and nothing replaces them at run time. What each one
// models is said here; the measurement behind each default is in docs/tuner.md, a section per
// field, under the field's name.
#pragma once

#include <cstddef>

namespace hoop {

struct LinkCost {
  double alphaUs;     // per message, one way
  double bytesPerUs;  // what a step of kLinkStepBytes each way adds to alphaUs, as a rate
};

struct CostDefaults {
  // One ring step over shared memory and over TCP: latency and bandwidth.
  LinkCost shm{1.0, 6000.0};
  LinkCost tcp{12.0, 2500.0};
  // One handshake through shared-memory eager buffers (no slot header, counters or copies).
  double eagerAlphaUs = 0.4;
  // Bytes of output per microsecond of the CPU reduction kernel.
  double reduceBytesPerUs = 10000.0;

  // The share of a step's fixed cost each message beyond the first of a step pays when several
  // are posted at once: over shm a slot header, over TCP a system call on each side.
  double extraMessageShareShm = 0.0;
  double extraMessageShareTcp = 1.0;
  // Ranks per CPU at or below which a single-host job's ranks have CPUs to spare (their copies
  // run at once, and bytes cost what they cost rather than cache misses and wake-ups).
  double spareCpusRanksPerCpu = 0.5;
  // Over shm where ranks share CPUs (more than one rank a CPU): what each step's latency (a ring
  // step, an eager handshake) gains per rank a CPU carries, as the ranks waiting in it sleep and
  // the CPUs wake them one after another. The default shm latencies are read with a CPU a rank.
  double sharedCpuWakeUpUsPerRank = 3.0;

  // Two-shot's byte term against the ring's (twoShotByteFactor): over TCP with CPUs to spare,
  // over TCP in one round, over TCP in slices where ranks share CPUs, over shm from 4 ranks, and
  // over shm at 3.
  double twoShotBytesTcpSpareCpus = 0.8;
  double twoShotBytesTcpOneRound = 0.75;
  double twoShotBytesTcpSliced = 1.0;
  double twoShotBytesShmFourUp = 0.8;
  double twoShotBytesShmThree = 1.05;

  // Rabenseifner's byte term against the ring's: each piece's exchange finishes before the next
  // starts, where the ring's pieces overlap.
  double rabenseifnerBytes = 1.3;

  // The double tree allreduce: what each piece beyond the first adds, in steps; a hop's share of
  // a ring step over TCP and over shm; its byte term against the ring's over TCP (ranks sharing
  // CPUs, ranks with CPUs to spare) and over shm (before the pipeline's fill).
  double treeStepsPerExtraPiece = 0.1;
  double treeHopShareTcp = 0.6;
  double treeHopShareShm = 0.75;
  double treeBytesTcp = 0.7;
  double treeBytesTcpSpareCpus = 1.1;
  double treeBytesShm = 0.8;
  // The double tree's pieces over shm and over TCP (at most HOOP_CHUNK_SIZE).
  size_t treePieceBytesShm = size_t{128} << 10;
  size_t treePieceBytesTcp = size_t{256} << 10;

  // Over TCP at 2 ranks: the bytes each exchange pays once more before the sender's and the
  // receiver's copies overlap.
  double tcpFillBytes = 128 << 10;

  // The level-2 cache per CPU assumed where the machine does not say (two-shot's slices).
  size_t assumedLevel2Bytes = size_t{1} << 20;
};

inline constexpr CostDefaults kCostDefaults{};

}  // namespace hoop
