#pragma once
// Graphviz `dot` (through libgvc) for groups of modest size: its layouts read better than
// our layered layout (fewer crossings, straighter long edges, splines), but it slows down
// steeply with size (a flat swin_t ran 9 minutes without finishing), so the canvas gives it
// only groups up to kDotMaxNodes boxes. Same input and result as layeredLayout(); edge
// splines come back sampled as polylines. Graphviz is not thread-safe: calls are serialised.
#include "views/layered_layout.h"

namespace fsc {

inline constexpr int kDotMaxNodes = 60;

// A result with `cancelled` set when Graphviz fails (the caller falls back to its own).
LayoutResult dotLayout(const LayoutInput& input, const LayoutOptions& options = {});

}  // namespace fsc
