// Every model in ONNX's own conformance data (Debian's libonnx-testdata: 1,000+ node,
// PyTorch-converted and simple models) imports, verifies, and round-trips unchanged.
#include <QtTest>


#include <filesystem>

#include "compiler/verifier.h"
#include "core/onnx_export.h"
#include "core/onnx_import.h"
#include "core/text_printer.h"
#include "test_support.h"

using namespace fsc;

class TestOnnxTestdata : public QObject {
    Q_OBJECT
private slots:
    void everyConformanceModelRoundTrips() {
        const std::filesystem::path root = FSC_ONNX_TESTDATA;
        QVERIFY2(std::filesystem::is_directory(root),
                 "libonnx-testdata is not installed (scripts/install-deps.sh --test installs it)");
        int models = 0;
        QStringList failures;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
            if (entry.path().filename() != "model.onnx") continue;
            ++models;
            const QString name = QString::fromStdString(
                std::filesystem::relative(entry.path().parent_path(), root).string());
            auto first = importModel(entry.path());
            if (!first) {
                failures << name + ": " + QString::fromStdString(first.status().message());
                continue;
            }
            if (Status s = verifyModel(*first); !s) {
                failures << name + ": verifier: " + QString::fromStdString(s.message());
                continue;
            }
            auto bytes = exportModelToBytes(*first);
            auto second = bytes ? importModelFromBytes(bytes->data(), bytes->size(), "exported.onnx")
                                : Result<Model>(bytes.status());
            if (!second) {
                failures << name + ": re-import: " + QString::fromStdString(second.status().message());
                continue;
            }
            if (printModel(*first) != printModel(*second)) failures << name + ": round trip changed the dump";
        }
        qInfo("%d conformance models checked", models);
        QVERIFY2(models > 1000, "fewer conformance models than the package ships");
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    }
};

QTEST_GUILESS_MAIN(TestOnnxTestdata)
#include "tst_onnx_testdata.moc"
