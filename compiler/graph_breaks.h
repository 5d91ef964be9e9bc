#pragma once
// Graph breaks: where execution of a compiled graph on a device backend must return to the
// host. Reads the backend's capability table, places every node on the device or (for ops
// the device lacks) on the CPU, cuts the schedule into regions that run without the host,
// and lists every break with its reason: an op that falls back to the CPU, a shape the
// host must read from the device (NonZero, a Reshape target computed on the device),
// control flow decided on the host, and each device-to-host copy that follows.
#include <string>
#include <vector>

#include "compiler/runtime/capability_table.h"
#include "core/graph.h"

namespace fsc {

enum class Placement { Device, Host };
enum class BreakKind { UnsupportedOp, DataDependentShape, HostControlFlow, DeviceToHostCopy };
const char* breakKindName(BreakKind kind);  // "unsupported-op", "data-dependent-shape", ...

struct GraphRegion {
    int index = 0;
    Placement placement = Placement::Device;
    std::vector<NodeId> nodes;  // in schedule order
};

struct GraphBreak {
    BreakKind kind = BreakKind::UnsupportedOp;
    NodeId node;           // the node that causes it (the reader, for a copy)
    ValueId value;         // the value crossing to the host, when there is one
    int fromRegion = -1;   // the region execution leaves (-1 at the start)
    int toRegion = -1;
    int64_t bytes = -1;    // copied bytes, when the shape is static
    std::string reason;    // one line
};

// A collective of a partitioned graph: a communication step between devices, not a break.
struct CommunicationStep {
    NodeId node;
    int64_t bytes = -1;  // each device's payload, when the shape is static
};

struct GraphBreakReport {
    std::string backend;  // the table's name
    std::vector<GraphRegion> regions;
    std::vector<GraphBreak> breaks;
    std::vector<CommunicationStep> communication;  // in schedule order; on the device, no region cut
    int deviceNodes = 0, hostNodes = 0;
    int hostShapeNodes = 0;  // shape arithmetic the host does from known shapes: no region, no break
};

// Shape arithmetic over shapes and constants (Shape -> Gather -> Concat -> Reshape target)
// is done by the host from the shapes it knows, so it causes no break. Collectives run on
// the device (NCCL) whatever the table lists: they are communication steps, not breaks.
// Analyses the top-level graph (a control-flow node's body runs where its node runs).
GraphBreakReport findGraphBreaks(const Graph& graph, const CapabilityTable& table);

}  // namespace fsc
