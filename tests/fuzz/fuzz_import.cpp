// libFuzzer target for the ONNX importer: any byte string must give a model or an error,
// never a crash, a hang or a sanitizer report. Runs the full import, shape inference
// included, then the summary and the text printer on whatever was accepted.
#include <cstddef>
#include <cstdint>

#include "core/model_summary.h"
#include "core/onnx_import.h"
#include "core/text_printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto model = fsc::importModelFromBytes(data, size, "fuzz.onnx");
    if (model) {
        fsc::ModelSummary summary = fsc::summarizeModel(*model);
        (void)summary;
        (void)fsc::printModel(*model).size();
    }
    return 0;
}
