// How hoop-topo writes sizes, speeds and index lists for people.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hoop {

// 49152 -> "48 KiB", 1310720 -> "1.25 MiB", 274877906944 -> "256 GiB".
std::string formatBytes(size_t bytes);

// 200000 -> "200 Gb/s", 2500 -> "2.5 Gb/s", 100 -> "100 Mb/s", 0 -> "speed unknown".
std::string formatSpeed(uint64_t mbps);

// {0,1,2,3,8,32,33} -> "0-3,8,32-33" (sorted first).
std::string formatIndexList(std::vector<unsigned> indices);

}  // namespace hoop
