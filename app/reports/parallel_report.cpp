#include "app/reports/parallel_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "app/profiling/simulated_trace.h"
#include "core/units.h"
#include "compiler/parallel/simulated_timeline.h"
#include "compiler/quantization/accuracy.h"

namespace fsc {
namespace {

nlohmann::json runJson(const SimulatedRun& run, const Interconnect& link) {
    nlohmann::json j{{"simulated", true},
                     {"interconnect", link.name},
                     {"device", SimulatedDevice{}.name},
                     {"devices", run.devices},
                     {"total_us", run.totalSeconds * 1e6},
                     {"single_device_us", run.singleDeviceSeconds * 1e6},
                     {"speedup", run.speedup()},
                     {"communication_us", run.communicationSeconds * 1e6},
                     {"communication_bytes", run.communicationBytes},
                     {"bubble_fraction", run.bubbleFraction},
                     {"weight_bytes_per_device", run.weightBytes}};
    return j;
}

std::string runText(const SimulatedRun& run, const Interconnect& link) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1);
    s << "simulated on " << run.devices << " x " << SimulatedDevice{}.name << " over " << link.name
      << " (alpha-beta model; nothing here was measured):\n";
    s << "  time " << run.totalSeconds * 1e6 << " us vs " << run.singleDeviceSeconds * 1e6 << " us on one device: speed-up "
      << std::setprecision(2) << run.speedup() << "x\n";
    s << std::setprecision(1) << "  communication " << run.communicationSeconds * 1e6 << " us on the critical path, "
      << bytesText(run.communicationBytes) << "; bubbles " << run.bubbleFraction * 100 << "% of device time\n";
    s << "  weights per device:";
    for (double b : run.weightBytes) s << " " << bytesText(b);
    s << "\n";
    return s.str();
}

}  // namespace

Result<ParallelReport> measureParallel(const ParallelArgs& a, const InputChoice& input, const Model& original,
                                       const CompileResult& result) {
    ParallelReport r;
    for (const PassReport& p : result.trace.passes) {
        if (p.name != "tensor-parallel") continue;
        auto figure = [&](const char* name) {
            auto it = p.counters.figures.find(name);
            return it == p.counters.figures.end() ? 0.0 : it->second;
        };
        r.allReduces += int(figure("all-reduces"));
        r.allGathers += int(figure("all-gathers"));
        r.allReduceBytes += figure("all-reduce bytes");
        r.allGatherBytes += figure("all-gather bytes");
        std::vector<std::string> reasons;  // distinct, in the order the pass met them
        for (const Rejection& rejection : p.rejections)
            if (std::find(reasons.begin(), reasons.end(), rejection.reason) == reasons.end())
                reasons.push_back(rejection.reason);
        for (size_t i = 0; i < reasons.size() && i < 3; ++i) r.notSplit += (i ? "; " : "") + reasons[i];
        if (reasons.size() > 3) r.notSplit += "; and " + std::to_string(reasons.size() - 3) + " more (--explain)";
    }
    if (a.tp > 1 && r.allReduces == 0 && r.allGathers == 0)
        r.notSplit = "nothing was split across " + std::to_string(a.tp) + " devices: " +
                     (r.notSplit.empty() ? std::string("no linear-layer pair in the graph") : r.notSplit);
    else
        r.notSplit.clear();
    // Every shard on this one device: the outputs must be the unpartitioned ones.
    auto data = checkInputs(*original.graph, input, 2, 11);
    if (!data) return data.status();
    auto error = compareOutputs(original, result.model, *data, nullptr, a.threads);
    if (!error) return withSizingHint(error.status(), data->sizing).withContext("partitioned run");
    r.samples = error->samples;
    r.meanRelativeDifference = error->meanRelative;
    const PartitionShape shape{a.pp > 1 ? a.pp : a.tp, a.pp > 1};
    auto simulated = simulateDevices(*result.model.graph, shape, a.interconnect, a.microbatches);
    if (!simulated) return simulated.status();
    r.simulation = runJson(simulated->run, simulated->link);
    r.simulationText = runText(simulated->run, simulated->link);
    if (a.pp > 1) {
        // Inference runs forward only: both schedules take the same steps; they differ in
        // how many micro-batches' activations a stage keeps in flight.
        const int inFlight = a.schedule == "gpipe" ? a.microbatches : std::min(a.microbatches, a.pp);
        r.simulation["schedule"] = a.schedule;
        r.simulation["microbatches"] = a.microbatches;
        r.simulation["microbatches_in_flight_per_stage"] = inFlight;
        r.simulationText += "  schedule " + a.schedule + ", " + std::to_string(a.microbatches) + " micro-batches, at most " +
                            std::to_string(inFlight) + " in flight per stage\n";
    }
    return r;
}

std::string parallelReportText(const ParallelArgs& a, const ParallelReport& r) {
    std::ostringstream s;
    s << "\npartitioned for";
    if (a.tp > 1) s << " tensor parallel " << a.tp;
    if (a.pp > 1) s << " pipeline parallel " << a.pp;
    s << ":\n";
    if (!r.notSplit.empty()) s << "  " << r.notSplit << "\n";
    if (a.tp > 1)
        s << "  " << r.allReduces << " AllReduce(s), " << std::fixed << std::setprecision(0) << r.allReduceBytes
          << " bytes of payload per device per run; " << r.allGathers << " AllGather(s) of output layers split by "
          << "columns, " << r.allGatherBytes << " bytes gathered\n";
    s << std::scientific << std::setprecision(2) << "  all shards on this one device (collectives computed locally): "
      << "mean relative difference from the unpartitioned outputs " << r.meanRelativeDifference << " (" << r.samples
      << " generated samples)\n";
    s << r.simulationText;
    return s.str();
}

nlohmann::json parallelReportJson(const ParallelArgs& a, const ParallelReport& r) {
    return {{"tp", a.tp},
            {"pp", a.pp},
            {"all_reduces", r.allReduces},
            {"all_reduce_bytes", r.allReduceBytes},
            {"all_gathers", r.allGathers},
            {"all_gather_bytes", r.allGatherBytes},
            {"single_device_mean_relative_difference", r.meanRelativeDifference},
            {"not_split", r.notSplit.empty() ? nlohmann::json() : nlohmann::json(r.notSplit)},
            {"simulation", r.simulation}};
}

}  // namespace fsc
