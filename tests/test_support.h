#pragma once
// Paths and helpers shared by the QtTest suites.
#include <QDir>
#include <QFileInfo>
#include <QTest>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include <filesystem>
#include <map>
#include <string>

namespace fsc::test {

// The fixtures' folder: the build's, or $FUSESCOPE_FIXTURE_DIR where the tests run away
// from their build (the device kit).
inline QString fixtureDir() {
    const QByteArray moved = qgetenv("FUSESCOPE_FIXTURE_DIR");
    return moved.isEmpty() ? QStringLiteral(FSC_FIXTURE_DIR) : QString::fromLocal8Bit(moved);
}
inline QString sampleModel() {
    const QByteArray moved = qgetenv("FUSESCOPE_SAMPLE_MODEL");
    return moved.isEmpty() ? QStringLiteral(FSC_SAMPLE_MODEL) : QString::fromLocal8Bit(moved);
}

inline std::filesystem::path fixture(const std::string& relative) {
    return std::filesystem::path(fixtureDir().toStdString()) / relative;
}

inline QStringList goodFixtures() {
    QStringList files;
    QDir dir(fixtureDir() + QStringLiteral("/good"));
    for (const QString& f : dir.entryList({QStringLiteral("*.onnx")}, QDir::Files, QDir::Name))
        files << dir.filePath(f);
    files << dir.filePath(QStringLiteral("external/model.onnx"));
    return files;
}

// Data rows for a test slot: column "path", one row per good fixture.
inline void addGoodFixtureRows() {
    QTest::addColumn<QString>("path");
    for (const QString& p : goodFixtures()) QTest::newRow(qPrintable(QFileInfo(p).fileName())) << p;
}

// Good fixtures the CPU backend refuses by design (it runs what the device does not, so the
// CUDA runs refuse them too): file name -> words its one-line refusal contains. The other
// good fixtures must run. tests/expected_skips.txt and tests/app/expected_refusals.txt say
// the same for the scripts.
inline const std::map<std::string, std::string>& fixturesTheCpuRefuses() {
    static const std::map<std::string, std::string> refused{
        {"functions.onnx", "no cpu kernel for local.fns.DoubleRelu"},  // model-local functions, not inlined
        {"new_dtypes_ir10.onnx", "has dtype int4"},                    // IR 10's dtypes import; int4 does not run
        {"sparse.onnx", "Constant has no value attribute this runtime reads"},  // sparse_value imports only
    };
    return refused;
}

// bad/cases.json: file name -> regular expression its error message must match.
inline QJsonObject badCases() {
    QFile f(fixtureDir() + QStringLiteral("/bad/cases.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace fsc::test
