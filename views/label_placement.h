#pragma once
// Edge labels that must not land on each other (where edges converge) or on a node: each
// label goes where it wants, or just below or above that, whichever is free; a label with no
// free place is not drawn (its edge's tooltip still says it).
#include <QRectF>

#include <algorithm>
#include <optional>
#include <vector>

namespace fsc {

class LabelPlacement {
public:
    // A place no label may take (a node's box).
    void block(const QRectF& area) { m_taken.push_back(area); }
    // Where `wanted` can be drawn, taking that place; nothing when all three are taken.
    std::optional<QRectF> place(const QRectF& wanted) {
        for (const double dy : {0.0, wanted.height() + 1, -(wanted.height() + 1)}) {
            const QRectF candidate = wanted.translated(0, dy);
            const bool free = std::none_of(m_taken.begin(), m_taken.end(), [&](const QRectF& other) {
                return other.adjusted(-2, -1, 2, 1).intersects(candidate);
            });
            if (free) {
                m_taken.push_back(candidate);
                return candidate;
            }
        }
        return std::nullopt;
    }

private:
    std::vector<QRectF> m_taken;
};

}  // namespace fsc
