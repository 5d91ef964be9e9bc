// Malformed input: every case gives one line naming the file and the cause, never a crash.
#include <QtTest>

#include "compiler/verifier.h"
#include "core/onnx_import.h"
#include "core/text_printer.h"
#include "test_support.h"

using namespace fsc;

namespace {

// Offsets where a top-level field of the serialized ModelProto ends. Cutting the file
// exactly there leaves a shorter but well-formed message, which may legitimately parse.
std::vector<size_t> topLevelFieldEnds(const QByteArray& bytes) {
    std::vector<size_t> ends;
    size_t pos = 0;
    auto varint = [&](uint64_t& v) {
        v = 0;
        for (int shift = 0; pos < size_t(bytes.size()) && shift < 64; shift += 7) {
            uint8_t b = uint8_t(bytes[qsizetype(pos++)]);
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    };
    while (pos < size_t(bytes.size())) {
        uint64_t key = 0, len = 0;
        if (!varint(key)) break;
        switch (key & 7) {
            case 0: varint(len); break;
            case 1: pos += 8; break;
            case 2: varint(len); pos += len; break;
            case 5: pos += 4; break;
            default: return ends;
        }
        ends.push_back(pos);
    }
    return ends;
}

}  // namespace

class TestBadInput : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY2(!test::badCases().isEmpty(), "bad/cases.json missing"); }

    void eachCaseNamesFileAndCause_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        const QJsonObject cases = test::badCases();
        for (auto it = cases.begin(); it != cases.end(); ++it)
            QTest::newRow(qPrintable(it.key())) << it.key() << it.value().toString();
    }
    void eachCaseNamesFileAndCause() {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const std::string path = (test::fixture("bad") / file.toStdString()).string();
        auto m = importModel(path);
        QVERIFY2(!m.isOk(), "a malformed model was accepted");
        const QString message = QString::fromStdString(m.status().message());
        QVERIFY2(message.startsWith(QString::fromStdString(path) + ": "), qPrintable(message));
        QVERIFY2(!message.contains(QLatin1Char('\n')), qPrintable(message));
        QVERIFY2(QRegularExpression(expected).match(message).hasMatch(),
                 qPrintable(message + "  (expected /" + expected + "/)"));
    }

    void missingFileIsNamed() {
        auto m = importModel("/nonexistent/model.onnx");
        QVERIFY(!m.isOk());
        QCOMPARE(m.status().code(), ErrorCode::NotFound);
        QVERIFY(m.status().message().find("/nonexistent/model.onnx: cannot open") == 0);
    }

    void aDirectoryIsNotAModel() {
        auto m = importModel(FSC_FIXTURE_DIR);
        QVERIFY(!m.isOk());
        QVERIFY2(m.status().message().find("not a regular file") != std::string::npos,
                 m.status().message().c_str());
    }

    void truncationAtEveryByteFailsCleanly() {
        const QByteArray bytes = test::readAll(QStringLiteral(FSC_SAMPLE_MODEL));
        QVERIFY(bytes.size() > 1000);
        const auto ends = topLevelFieldEnds(bytes);
        QVERIFY(ends.size() >= 4);
        ImportOptions options;
        options.inferShapes = false;  // parsing and validation are what is under test
        int accepted = 0;
        for (qsizetype cut = 0; cut < bytes.size(); ++cut) {
            auto m = importModelFromBytes(bytes.constData(), size_t(cut), "cut.onnx", {}, options);
            if (m.isOk()) {
                ++accepted;
                QVERIFY2(std::find(ends.begin(), ends.end(), size_t(cut)) != ends.end(),
                         qPrintable(QStringLiteral("cut at %1 inside a field was accepted").arg(cut)));
            } else {
                QVERIFY(m.status().message().rfind("cut.onnx: ", 0) == 0);
            }
        }
        // Only cuts after the graph and opsets, dropping trailing optional fields, may pass.
        QVERIFY(accepted <= 3);
    }

    void trailingGarbageIsRejectedOrIgnoredWithoutCrash() {
        QByteArray bytes = test::readAll(QStringLiteral(FSC_SAMPLE_MODEL));
        bytes.append(QByteArray(64, '\xff'));
        auto m = importModelFromBytes(bytes.constData(), size_t(bytes.size()), "garbage.onnx");
        QVERIFY(!m.isOk());
    }

    // Inputs that once crashed the import (found by the fuzzer) now import or fail cleanly.
    void fuzzRegressionsImportWithoutCrashing() {
        QDir dir(QStringLiteral(FSC_FUZZ_REGRESSIONS));
        const QStringList files = dir.entryList({QStringLiteral("*.onnx")}, QDir::Files);
        QVERIFY(!files.isEmpty());
        for (const QString& f : files) {
            const std::string path = dir.filePath(f).toStdString();
            auto m = importModel(path);
            if (m) {
                QVERIFY2(verifyModel(*m).isOk(), qPrintable(f));
                QVERIFY(!printModel(*m).empty());
            } else {
                QVERIFY2(m.status().message().rfind(path + ": ", 0) == 0, m.status().message().c_str());
            }
        }
    }

    void externalDataFromMemoryIsRefused() {
        const QByteArray bytes = test::readAll(QString::fromStdString(
            test::fixture("good/external/model.onnx").string()));
        auto m = importModelFromBytes(bytes.constData(), size_t(bytes.size()), "mem.onnx");
        QVERIFY(!m.isOk());
        QVERIFY2(m.status().message().find("cannot be resolved: the model has no folder") !=
                     std::string::npos,
                 m.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_bad_input.moc"
