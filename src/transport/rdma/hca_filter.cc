#include "transport/rdma/hca_filter.h"

#include <algorithm>
#include <charconv>

#include "base/error.h"

namespace hoop {

HcaFilter HcaFilter::parse(std::string_view text) {
  HcaFilter filter;
  filter.text_ = std::string(text);
  auto bad = [&](const std::string& why) {
    fail(hoopInvalidArgument, "HOOP_IB_HCA='", filter.text_, "': ", why,
         " (a comma list of device[:port], e.g. mlx5_0:1,mlx5_1; a leading ^ excludes, a "
         "leading = matches names exactly)");
  };
  if (!text.empty() && text.front() == '^') {
    filter.exclude_ = true;
    text.remove_prefix(1);
  }
  if (!text.empty() && text.front() == '=') {
    filter.exact_ = true;
    text.remove_prefix(1);
  }
  if (text.empty()) {
    if (filter.exclude_ || filter.exact_) bad("names no device");
    return filter;
  }
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    Entry entry;
    if (const size_t colon = item.find(':'); colon != std::string_view::npos) {
      std::string_view portText = item.substr(colon + 1);
      int port = 0;
      auto [end, error] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
      if (portText.empty() || error != std::errc() || end != portText.data() + portText.size() ||
          port < 1 || port > 255) {
        bad(str("port '", portText, "' is not a number in 1..255"));
      }
      entry.port = port;
      item = item.substr(0, colon);
    }
    if (item.empty()) bad("an entry has no device name");
    entry.device = std::string(item);
    filter.entries_.push_back(std::move(entry));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return filter;
}

bool HcaFilter::matches(const Entry& entry, std::string_view device, int port) const {
  const bool name = exact_ ? device == entry.device : device.starts_with(entry.device);
  return name && (entry.port == 0 || entry.port == port);
}

bool HcaFilter::allows(std::string_view device, int port) const {
  if (entries_.empty()) return true;
  const bool listed = std::any_of(entries_.begin(), entries_.end(),
                                  [&](const Entry& e) { return matches(e, device, port); });
  return listed != exclude_;
}

}  // namespace hoop
