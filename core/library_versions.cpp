#include "core/library_versions.h"

#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

namespace fsc {

std::string onnxLibraryVersion() { return onnx::LAST_RELEASE_VERSION; }

std::string protobufLibraryVersion() {
    // The headers' version: Debian's libprotobuf refuses to load against other headers.
    return google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION);
}

}  // namespace fsc
