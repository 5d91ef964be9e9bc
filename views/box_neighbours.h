#pragma once
// Keyboard navigation on the canvas: from the selected box, the nearest box in an arrow's
// direction, by the distance ahead plus the distance aside (so Down reaches the next layer
// of the graph, not a box further down straight below).
#include <cmath>
#include <vector>

namespace fsc {

struct BoxCentre {
    double x = 0, y = 0;
};

enum class ArrowDirection { Up, Down, Left, Right };

// The index of the nearest centre from `centres[from]` in `direction`, or -1.
inline int nearestInDirection(const std::vector<BoxCentre>& centres, int from, ArrowDirection direction) {
    if (from < 0 || size_t(from) >= centres.size()) return -1;
    const BoxCentre c = centres.begin()[from];
    int best = -1;
    double bestScore = 0;
    for (int i = 0; i < int(centres.size()); ++i) {
        if (i == from) continue;
        const double dx = centres[size_t(i)].x - c.x, dy = centres[size_t(i)].y - c.y;
        double ahead = 0, aside = 0;
        switch (direction) {
            case ArrowDirection::Down: ahead = dy, aside = dx; break;
            case ArrowDirection::Up: ahead = -dy, aside = dx; break;
            case ArrowDirection::Right: ahead = dx, aside = dy; break;
            case ArrowDirection::Left: ahead = -dx, aside = dy; break;
        }
        if (ahead <= 1) continue;
        const double score = ahead + std::abs(aside);
        if (best < 0 || score < bestScore) best = i, bestScore = score;
    }
    return best;
}

}  // namespace fsc
