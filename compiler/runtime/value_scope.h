#pragma once
// Name lookup of values visible to a subgraph: its own, then its enclosing graphs'.
#include <string>

#include "compiler/runtime/rt_tensor.h"

namespace fsc {

class ValueScope {
public:
    virtual ~ValueScope() = default;
    virtual const RtTensor* find(const std::string& name) const = 0;
};

}  // namespace fsc
