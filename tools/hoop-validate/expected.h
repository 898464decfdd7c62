// What each path should do, so that a verdict is a fraction of it rather than a fixed threshold.
// Two sources: the operator's file (--expect, firm references) and the topology (the slower NIC
// of the two hosts, shared by the ranks of a host that use it at once: a ceiling, reported beside
// each figure). Where the file gives no figure for a transport, a cell is judged against the
// cluster: the median of the cells of its kind (metric, plan phase, transport).
#pragma once

#include <map>
#include <string>

namespace hoop::validate {

struct ExpectedFigures {
  std::map<std::string, double> bandwidthGBps;  // by transport: one way, per pair
  std::map<std::string, double> latencyUs;      // by transport: one way, p50
};

// Lines "TRANSPORT bandwidth GB/S" or "TRANSPORT latency MICROSECONDS"; '#' starts a comment.
// Throws hoop::Error (hoopInvalidArgument) naming the file and line of anything else.
ExpectedFigures readExpectedFigures(const std::string& path);

// The topology's ceiling for one way between two hosts: the slower NIC's speed in GB/s, divided
// among `sharing` ranks that use it at once; 0 when a speed is unknown.
double nicCeilingGBps(double gbpsA, double gbpsB, int sharing);

}  // namespace hoop::validate
