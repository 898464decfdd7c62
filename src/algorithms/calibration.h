// A short measurement of the communicator's own links and reduction kernel at init, so the cost
// model (tuner.h) speaks of this machine rather than of the one its defaults were measured on.
//
// Every rank times batches of ring steps with its neighbours (8 bytes for the latency, 256 KiB
// for the bandwidth; the fastest batch's mean step) and the CPU reduction, then the ranks pass
// their figures once around the ring keeping the slowest: every rank adopts the same numbers, so
// every rank still makes the same choices. About 2 x (slots + 2) + 60 + n ring steps (the first
// pass through the slots warms their pages) and a millisecond of reduction;
// HOOP_TUNE_CALIBRATE=0 skips it and keeps the defaults, and a HOOP_TUNE_SHM/TCP/REDUCE value is
// kept as given.
#pragma once

namespace hoop {

class Communicator;

// Measures and adopts (Communicator::adoptCostModel); collective over all ranks. Needs the ring
// neighbours connected.
void calibrateCostModel(Communicator& comm);

// Whether a shm step of `stepUs` says two ranks shared one core rather than what the link costs:
// a step about as long as the spin budget (the waiting rank spins on the core its peer needs,
// then yields). Such a figure is not adopted.
bool stepShowsSharedCore(double stepUs, double spinUs);

}  // namespace hoop
