// Repaint time of the timeline with many kernels (issue 7: 100,000 kernels within 16 ms),
// against the same widget with no trace in the same process. Offscreen, into an image.
#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "views/timeline_view.h"

using namespace fsc;

namespace {

std::shared_ptr<Trace> synthetic(int kernels, int streams) {
    auto t = std::make_shared<Trace>();
    t->backend = "cuda";
    t->iterations = 1;
    for (int64_t id = 0; id < 500; ++id) t->nodes.push_back({id, "n" + std::to_string(id), id % 3 ? "MatMul" : "Relu", "", {}, 0, 0});
    for (int i = 0; i < kernels; ++i) {
        Activity a;
        a.name = "k";
        a.stream = i % streams;
        a.node = i % 500;
        a.startNs = int64_t(i / streams) * 2000 + (i % 7) * 10;
        a.endNs = a.startNs + 1500;
        t->activities.push_back(a);
    }
    return t;
}

double medianPaintMs(const TimelineView& view, QSize size, int repeats) {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        QPainter p(&image);
        QElapsedTimer timer;
        timer.start();
        view.paintTo(p, size);
        ms.push_back(double(timer.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    const int kernels = argc > 1 ? std::atoi(argv[1]) : 100000;
    const QSize size(1600, 400);
    TimelineView empty;
    empty.resize(size);
    const double emptyMs = medianPaintMs(empty, size, 20);
    TimelineView view;
    view.resize(size);
    view.setTrace(synthetic(kernels, 4));
    const double allMs = medianPaintMs(view, size, 20);
    TimeScale zoomed = view.scale();
    zoomed.zoomAt(800, 200);
    view.setScale(zoomed);
    const double zoomedMs = medianPaintMs(view, size, 20);
    std::printf("%-10s %8s %12s %12s %10s %12s %12s\n", "kernels", "lanes", "all in view", "zoomed 200x", "empty",
                "all/empty", "zoomed/empty");
    std::printf("%-10d %8zu %10.2f ms %10.2f ms %7.2f ms %11.1fx %11.1fx\n", kernels, view.lanes().size(), allMs, zoomedMs,
                emptyMs, allMs / emptyMs, zoomedMs / emptyMs);
    return 0;
}
