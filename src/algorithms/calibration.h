// A short measurement of the communicator's own links and reduction kernel at init, so the cost
// model (tuner.h) speaks of this machine rather than of the one its defaults were measured on.
//
// Every rank times batches of ring steps with its neighbours (8 bytes for the latency, 256 KiB
// for the bandwidth; the fastest batch's mean step) and the CPU reduction, then the ranks pass
// their figures once around the ring keeping the slowest: every rank adopts the same numbers, so
// every rank still makes the same choices. About 2 x (slots + 2) + 60 + n ring steps (the first
// pass through the slots warms their pages) and a millisecond of reduction. Shm figures that
// cannot be the link's (stepShowsSharedCore, stepsConsistent) are measured again, up to three
// times in all, and then the defaults are kept; every rank decides alike from the agreed
// figures. HOOP_TUNE_CALIBRATE=0 skips it and keeps the defaults, and a HOOP_TUNE_SHM/TCP/REDUCE
// value is kept as given.
#pragma once

namespace hoop {

class Communicator;

// Measures and adopts (Communicator::adoptCostModel); collective over all ranks. Needs the ring
// neighbours connected.
void calibrateCostModel(Communicator& comm);

// Whether a shm step of `stepUs` says two ranks shared one core rather than what the link costs:
// a step about as long as the spin budget (the waiting rank spins on the core its peer needs,
// then yields). Such a figure is measured again, as stepsConsistent's are.
bool stepShowsSharedCore(double stepUs, double spinUs);

// Whether an 8-byte and a 256 KiB shm step were timed in the same period of the machine. The
// 256 KiB step carries 32768 times the payload: where it reads less than kMinBulkOverSmallStep
// times the 8-byte step, an 8-byte handshake would cost as much as copying 64 KiB, which no
// memory link does; the small steps ran while the machine was slower. With 4 ranks on 2 cores
// here, 8-byte steps read 6-70 us through a whole measurement where 256 KiB ones read 25-30 us,
// giving rates from 15 GB/s up to the 1e-3 us floor's 262 TB/s, and the tuner then picked the
// direct allreduce, up to 2x slower, from 16 to 64 KiB (in 7 of 40 launches; after this check,
// 10 of 40 measured again and none picked it). Launches that read both in one period gave ratios
// of 5.9 to 42, slow launches included (bench/RESULTS.md, fourteenth pass).
inline constexpr double kMinBulkOverSmallStep = 5;
bool stepsConsistent(double smallStepUs, double bulkStepUs);

}  // namespace hoop
