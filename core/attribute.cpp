#include "core/attribute.h"

namespace fsc {

const char* attributeTypeName(Attribute::Type type) {
    switch (type) {
        case Attribute::Type::Undefined: return "undefined";
        case Attribute::Type::Float: return "float";
        case Attribute::Type::Int: return "int";
        case Attribute::Type::String: return "string";
        case Attribute::Type::Tensor: return "tensor";
        case Attribute::Type::Graph: return "graph";
        case Attribute::Type::SparseTensor: return "sparse_tensor";
        case Attribute::Type::TypeProto: return "type_proto";
        case Attribute::Type::Floats: return "floats";
        case Attribute::Type::Ints: return "ints";
        case Attribute::Type::Strings: return "strings";
        case Attribute::Type::Tensors: return "tensors";
        case Attribute::Type::Graphs: return "graphs";
        case Attribute::Type::SparseTensors: return "sparse_tensors";
        case Attribute::Type::TypeProtos: return "type_protos";
    }
    return "undefined";
}

}  // namespace fsc
