#include "app/cli/parallel_step.h"

#include "app/cli/cli_app.h"
#include "compiler/parallel/interconnect.h"

namespace fsc::cli {

void addParallelOptions(CLI::App& command, ParallelArgs& a) {
    const std::string group =
        "parallel partitioning (every shard runs here, checked against the unpartitioned graph; "
        "the multi-device timeline is simulated)";
    command.add_option("--tp", a.tp,
                       "tensor parallel over N devices: linear-layer pairs split by columns\n"
                       "then rows (attention by heads), one AllReduce per pair")
        ->type_name("N")
        ->check(integerIn(1, 1024, "a device count >= 1"))
        ->group(group);
    command.add_option("--pp", a.pp,
                       "pipeline parallel: N stages of equal estimated time, Send/Recv of\n"
                       "every activation crossing a cut")
        ->type_name("N")
        ->check(integerIn(1, 1024, "a stage count >= 1"))
        ->group(group);
    command.add_option("--microbatches", a.microbatches, "micro-batches for --pp (default 1)")
        ->type_name("M")
        ->check(integerIn(1, 1024, "a count >= 1"))
        ->group(group);
    command.add_option("--schedule", a.schedule, "pipeline schedule (default 1f1b)")
        ->type_name("gpipe|1f1b")
        ->check(oneOf({"gpipe", "1f1b"}, "gpipe or 1f1b"))
        ->group(group);
    command.add_option("--interconnect", a.interconnect, "nvlink4 (default), pcie5 or ndr for the simulation")
        ->type_name("NAME")
        ->check(CLI::Validator(
            [](std::string& v) {
                return interconnectPreset(v) ? std::string() : std::string("needs nvlink4, pcie5 or ndr");
            },
            ""))
        ->group(group);
}

}  // namespace fsc::cli
