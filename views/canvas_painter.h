#pragma once
// Paints a GraphCanvas's scene: groups, nodes, edges with their labels, marks of a comparison,
// graph-break regions and edges, heat, the selection, and the legend of what the colours
// mean. The same painting serves the screen and the PNG/SVG export; the canvas keeps the
// state and the interaction, the painter only reads it.
#include <QSizeF>

class QPainter;

namespace fsc {

class GraphCanvas;
struct ViewTransform;

class CanvasPainter {
public:
    explicit CanvasPainter(const GraphCanvas& canvas) : c(canvas) {}
    void paint(QPainter& p, const ViewTransform& view, QSizeF area) const;

private:
    void paintPrecisionLegend(QPainter& p, QSizeF area) const;
    void paintHeatLegend(QPainter& p, QSizeF area, double scale) const;  // scale: the heat's full range
    const GraphCanvas& c;
};

}  // namespace fsc
