// HOOP_IB_HCA: which RDMA devices and ports hoop may use, in NCCL_IB_HCA's grammar.
//
//   mlx5_0:1,mlx5_1      a comma list of device[:port]; a device without a port allows all its
//                        ports; a name matches every device it is a prefix of (mlx5 matches
//                        mlx5_0 and mlx5_12)
//   =mlx5_0              a leading = matches names exactly
//   ^mlx5_2              a leading ^ excludes the listed ones instead; ^= excludes exact names
//
// Unset or empty allows every device and port.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hoop {

class HcaFilter {
 public:
  HcaFilter() = default;
  // Throws hoopInvalidArgument naming HOOP_IB_HCA for text it cannot read (an empty name, a port
  // that is not a number in 1..255).
  static HcaFilter parse(std::string_view text);

  bool allows(std::string_view device, int port) const;
  // Whether the filter lists anything (an empty one allows everything).
  bool empty() const { return entries_.empty(); }
  // The setting as written, for messages.
  const std::string& text() const { return text_; }

 private:
  struct Entry {
    std::string device;
    int port = 0;  // 0: every port
  };
  bool matches(const Entry& entry, std::string_view device, int port) const;

  std::vector<Entry> entries_;
  bool exclude_ = false;
  bool exact_ = false;
  std::string text_;
};

}  // namespace hoop
