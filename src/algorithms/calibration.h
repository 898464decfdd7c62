// A short measurement of the communicator's own links and reduction kernel at init, so the cost
// model (tuner.h) speaks of this machine rather than of the one its defaults were measured on.
//
// Every rank times batches of ring steps with its neighbours (8 bytes for the latency, 256 KiB
// for the bandwidth; the fastest batch's mean step) and the CPU reduction, then the ranks pass
// their figures once around the ring keeping the slowest: every rank adopts the same numbers, so
// every rank still makes the same choices. About 2 x (slots + 2) + 60 + n ring steps (the first
// pass through the slots warms their pages) and a millisecond of reduction. Figures that cannot
// be the link's (ranksStayedOnOneCpu, stepsConsistent) are measured again, up to three times in
// all: ranks still stacked at the third are taken as they run, and small steps still too slow
// leave the defaults; every rank decides alike from what went around the ring.
//
// Off by default: only HOOP_TUNE_CALIBRATE=1 measures. A measured figure differs from run to run,
// and a model priced with it may then pick another schedule, and so give other floating-point
// bits, in the next run of the same job (docs/tuner.md, "Calibration"). When on, each agreed
// figure is snapped to the nearest power of two (snapToGrid), so that noise moves the model only
// where a figure lies near the middle between two classes. A HOOP_TUNE_SHM/TCP/REDUCE value is
// kept as given, unsnapped.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hoop {

class Team;

// What a calibration did: whether it adopted measured link figures, and why each attempt it
// did not adopt was set aside (one line each, also logged at INFO).
struct CalibrationOutcome {
  bool adopted = false;
  std::vector<std::string> setAside;
};

// Measures and adopts (Team::adoptCostModel) where the team's cost model asks for it
// (CostModel::calibrate); collective over all ranks. Needs the ring neighbours connected.
CalibrationOutcome calibrateCostModel(Team& comm);

// A measured figure (> 0) on the calibration's grid: the power of two nearest to it on a log
// scale, so two runs whose figures lie within a factor of sqrt(2) of one power of two adopt the
// same one.
double snapToGrid(double figure);

// Where one rank ran while it timed steps: its CPU just before the first step and just after
// the last (-1: not known).
struct CpuSpan {
  int32_t first = -1;
  int32_t last = -1;
};

// A rank's spans for its 8-byte steps and for its 256 KiB steps, each figure's own.
struct TimingSpans {
  CpuSpan latency;
  CpuSpan bulk;
};

// Whether two ranks of one host (equal `hostIds`) were on the same CPU at both ends of one of
// the timings. Asked only where every host has a CPU for each of its ranks: there, that is the
// kernel not yet having spread processes that started out on one CPU (ranks that spin rather
// than sleep give it few chances to place them again), and every step pays two context
// switches: a step reads many times slower, at a fraction of the bandwidth, though most such
// ranks spread soon after, and a model priced on those figures picks the wrong schedules for the
// whole job. Such an attempt is set aside and measured again after a pause; ranks still stacked
// at the last attempt are taken as the job will run. Each timing is judged on its own: one span
// around both missed a rank that moved off a shared CPU between them, after all its 8-byte steps
// had run stacked. The figures are in docs/design-notes.md, "Choosing a schedule".
bool ranksStayedOnOneCpu(std::span<const TimingSpans> spans, std::span<const uint64_t> hostIds);

// Whether an 8-byte and a 256 KiB shm step were timed in the same period of the machine. The
// 256 KiB step carries 32768 times the payload: where it reads less than kMinBulkOverSmallStep
// times the 8-byte step, an 8-byte handshake would cost as much as copying 64 KiB, which no
// memory link does; the small steps ran while the machine was slower. Left in, such figures give
// absurd bandwidths and made the tuner pick a schedule up to 2x slower at medium sizes; launches
// that read both steps in one period, slow ones included, stayed well above the ratio
// (docs/design-notes.md, "Measurements behind the defaults").
inline constexpr double kMinBulkOverSmallStep = 5;
bool stepsConsistent(double smallStepUs, double bulkStepUs);

}  // namespace hoop
