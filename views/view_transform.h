#pragma once
// Scene <-> screen mapping of the canvas: a scale and an offset, zoom about a fixed point,
// fit to the window. Pure maths, tested without a window.
#include <algorithm>

namespace fsc {

struct ViewTransform {
    double scale = 1;
    double dx = 0, dy = 0;  // screen position of the scene origin

    double toScreenX(double x) const { return x * scale + dx; }
    double toScreenY(double y) const { return y * scale + dy; }
    double toSceneX(double sx) const { return (sx - dx) / scale; }
    double toSceneY(double sy) const { return (sy - dy) / scale; }

    static constexpr double kMinScale = 0.005, kMaxScale = 8;

    // Zooms by `factor` keeping the scene point under (sx, sy) where it is on screen.
    void zoomAt(double sx, double sy, double factor) {
        const double x = toSceneX(sx), y = toSceneY(sy);
        scale = std::clamp(scale * factor, kMinScale, kMaxScale);
        dx = sx - x * scale;
        dy = sy - y * scale;
    }
    void pan(double ddx, double ddy) {
        dx += ddx;
        dy += ddy;
    }
    // The whole scene in the view with a margin, centred, never magnified past 1.
    static ViewTransform fit(double sceneW, double sceneH, double viewW, double viewH, double margin = 24) {
        ViewTransform t;
        const double w = std::max(1.0, viewW - 2 * margin), h = std::max(1.0, viewH - 2 * margin);
        t.scale = std::clamp(std::min(w / std::max(sceneW, 1.0), h / std::max(sceneH, 1.0)), kMinScale, 1.0);
        t.dx = (viewW - sceneW * t.scale) / 2;
        t.dy = (viewH - sceneH * t.scale) / 2;
        return t;
    }
    // The first view of a model: the whole graph as opened (its top-level groups) when it
    // fits at a readable scale; else readable (at most 1:1, the scene's width in the view)
    // and starting at the top, where the inputs are.
    static constexpr double kReadableScale = 0.6;  // node labels at about 7 pt
    static ViewTransform start(double sceneW, double sceneH, double viewW, double viewH, double margin = 24) {
        if (const ViewTransform whole = fit(sceneW, sceneH, viewW, viewH, margin); whole.scale >= kReadableScale)
            return whole;
        ViewTransform t;
        const double w = std::max(1.0, viewW - 2 * margin);
        t.scale = std::clamp(w / std::max(sceneW, 1.0), kMinScale, 1.0);
        t.dx = (viewW - sceneW * t.scale) / 2;
        t.dy = sceneH * t.scale + 2 * margin <= viewH ? (viewH - sceneH * t.scale) / 2 : margin;
        return t;
    }
};

}  // namespace fsc
