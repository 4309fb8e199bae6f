// Colours of removed and added diff lines, shared by the diff views and the screenshot tests.
#pragma once

#include <imgui.h>

namespace pb::workbench::gui {
inline constexpr ImU32 kRemovedColor = IM_COL32(125, 38, 38, 255);
inline constexpr ImU32 kAddedColor = IM_COL32(34, 105, 44, 255);
}  // namespace pb::workbench::gui
