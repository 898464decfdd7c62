// Text for XML (the SVG charts and heatmaps hoop's tools write): the five special characters as
// entities, and the control characters XML 1.0 cannot carry even escaped dropped.
#pragma once

#include <string>
#include <string_view>

namespace hoop {

std::string xmlEscape(std::string_view text);

}  // namespace hoop
