#pragma once
// Versions of the libraries core is linked with, for --version and the About dialog.
#include <string>

namespace fsc {

std::string onnxLibraryVersion();      // libonnx, e.g. "1.12.0"
std::string protobufLibraryVersion();  // libprotobuf, e.g. "3.21.12"

}  // namespace fsc
