// Repaint time of the graph canvas with everything expanded (issue 5: within 16 ms), at
// "fit" (the whole graph in view: every box and edge drawn small, labels off) and at 1:1
// (labels on, most of the graph culled), against painting the same canvas scrolled past
// the graph (the fixed cost) in the same process. Offscreen platform; median of N paints.
#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QSignalSpy>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/onnx_import.h"
#include "views/graph_canvas.h"
#include "views/job_runner.h"

using namespace fsc;

namespace {

double medianPaintMs(GraphCanvas& canvas, int repeats) {
    QImage image(canvas.size(), QImage::Format_ARGB32_Premultiplied);
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
        QElapsedTimer t;
        t.start();
        canvas.render(&image);
        ms.push_back(double(t.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_canvas_paint MODEL.onnx... [--repeats N]\n");
        return 64;
    }
    int repeats = 20;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
        else models.push_back(a);
    }
    std::printf("%-26s %7s %7s %10s %10s %10s %9s %9s\n", "model", "boxes", "edges", "fit ms", "1:1 ms", "empty ms",
                "fit/empty", "1:1/empty");
    for (const std::string& path : models) {
        auto model = importModel(path);
        if (!model) {
            std::fprintf(stderr, "error: %s\n", model.status().message().c_str());
            return 2;
        }
        JobRunner jobs;
        GraphCanvas canvas(jobs);
        canvas.resize(1600, 1000);
        QSignalSpy laidOut(&canvas, &GraphCanvas::laidOut);
        canvas.setGraph(std::make_shared<const Graph>(*model->graph), 1 << 20);
        if (!laidOut.wait(120000)) {
            std::fprintf(stderr, "error: %s: no layout\n", path.c_str());
            return 2;
        }
        const CanvasLayout& layout = canvas.canvasLayout();
        canvas.setTransform(ViewTransform::fit(layout.width, layout.height, 1600, 1000));
        const double fit = medianPaintMs(canvas, repeats);
        canvas.setTransform(ViewTransform::start(layout.width, layout.height, 1600, 1000));
        const double one = medianPaintMs(canvas, repeats);
        ViewTransform away;
        away.dx = -10 * (layout.width + 1000);  // nothing in view
        canvas.setTransform(away);
        const double empty = medianPaintMs(canvas, repeats);
        std::printf("%-26s %7zu %7zu %10.2f %10.2f %10.2f %8.1fx %8.1fx\n", path.substr(path.find_last_of('/') + 1).c_str(),
                    layout.boxes.size(), layout.edges.size(), fit, one, empty, fit / empty, one / empty);
    }
    return 0;
}
