// A request a rank announces by name, because the response cache cannot stand for it, and the
// byte format the ranks exchange those announcements in.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "train/request_shape.h"

namespace hoop::train {

struct Announcement {
  std::string name;
  RequestShape shape;

  bool operator==(const Announcement&) const = default;
};

// Little-endian, length-prefixed: version byte, u32 record count, then per record
// u32 name length, name, u8 kind, u8 type, u8 op, i32 root, u64 count, f64 prescale, f64 postscale.
std::vector<uint8_t> encodeAnnouncements(const std::vector<Announcement>& announcements);
// Throws hoop::Exception (hoopInternalError) on a malformed or truncated buffer; trailing zero
// padding (the exchange pads every rank's bytes to the longest) is ignored.
std::vector<Announcement> decodeAnnouncements(std::span<const uint8_t> bytes);

}  // namespace hoop::train
