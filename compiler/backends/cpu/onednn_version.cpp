#include "compiler/backends/cpu/onednn_version.h"

#include <oneapi/dnnl/dnnl.h>

namespace fsc {

std::string oneDnnVersion() {
    const dnnl_version_t* v = dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

}  // namespace fsc
