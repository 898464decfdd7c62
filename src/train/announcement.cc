#include "train/announcement.h"

#include <bit>
#include <cstring>

#include "hoop/hoop.hpp"

namespace hoop::train {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the announcement format is little-endian");

// Zero marks the end of the announcements (padding), so the format starts counting at 1.
constexpr uint8_t kFormatVersion = 1;

template <typename T>
void append(std::vector<uint8_t>& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool atEnd() const { return offset_ >= bytes_.size(); }
  uint8_t peek() const { return bytes_[offset_]; }

  template <typename T>
  T read() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  std::string readString(size_t length) {
    need(length);
    std::string text(reinterpret_cast<const char*>(bytes_.data() + offset_), length);
    offset_ += length;
    return text;
  }

 private:
  void need(size_t length) const {
    if (bytes_.size() - offset_ < length) {
      throw Exception(hoopInternalError, "training engine: truncated announcement (" +
                                             std::to_string(bytes_.size()) + " bytes)");
    }
  }
  std::span<const uint8_t> bytes_;
  size_t offset_ = 0;
};

}  // namespace

std::vector<uint8_t> encodeAnnouncements(const std::vector<Announcement>& announcements) {
  std::vector<uint8_t> out;
  if (announcements.empty()) return out;
  append<uint8_t>(out, kFormatVersion);
  append<uint32_t>(out, static_cast<uint32_t>(announcements.size()));
  for (const Announcement& a : announcements) {
    append<uint32_t>(out, static_cast<uint32_t>(a.name.size()));
    out.insert(out.end(), a.name.begin(), a.name.end());
    append<uint8_t>(out, static_cast<uint8_t>(a.shape.kind));
    append<uint8_t>(out, static_cast<uint8_t>(a.shape.type));
    append<uint8_t>(out, static_cast<uint8_t>(a.shape.op));
    append<int32_t>(out, a.shape.root);
    append<uint64_t>(out, a.shape.count);
    append<double>(out, a.shape.prescale);
    append<double>(out, a.shape.postscale);
  }
  return out;
}

std::vector<Announcement> decodeAnnouncements(std::span<const uint8_t> bytes) {
  std::vector<Announcement> announcements;
  Reader in(bytes);
  if (in.atEnd() || in.peek() == 0) return announcements;
  if (const auto version = in.read<uint8_t>(); version != kFormatVersion) {
    throw Exception(hoopInternalError, "training engine: announcement format " +
                                           std::to_string(version) + ", expected " +
                                           std::to_string(kFormatVersion));
  }
  // The count up front makes a buffer cut between two records an error, not fewer records.
  const auto count = in.read<uint32_t>();
  for (uint32_t i = 0; i < count; ++i) {
    Announcement a;
    a.name = in.readString(in.read<uint32_t>());
    const auto kind = in.read<uint8_t>();
    const auto type = in.read<uint8_t>();
    const auto op = in.read<uint8_t>();
    if (kind >= kRequestKindCount || !knownType(static_cast<hoopDataType_t>(type)) ||
        !knownOp(static_cast<hoopRedOp_t>(op))) {
      throw Exception(hoopInternalError, "training engine: announcement of '" + a.name +
                                             "' has an unknown kind, type or operation");
    }
    a.shape.kind = static_cast<RequestKind>(kind);
    a.shape.type = static_cast<hoopDataType_t>(type);
    a.shape.op = static_cast<hoopRedOp_t>(op);
    a.shape.root = in.read<int32_t>();
    a.shape.count = in.read<uint64_t>();
    a.shape.prescale = in.read<double>();
    a.shape.postscale = in.read<double>();
    announcements.push_back(std::move(a));
  }
  while (!in.atEnd()) {
    if (in.read<uint8_t>() != 0) {
      throw Exception(hoopInternalError, "training engine: stray bytes after the announcements");
    }
  }
  return announcements;
}

}  // namespace hoop::train
