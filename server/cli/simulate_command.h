// `wschedctl simulate`: the what-if simulator (server/simulate/) on files,
// no server involved. docs/scaling.md "Choosing a warm buffer" walks through it.
//
//   simulate --catalog=FILE --trace=FILE [--timings=FILE] [--node-start=D]
//            [--driver-install=D] [--set=K=V ...] [--variant=NAME:K=V,.. ...]
//            [--long-wait=5m] [--chart=out.svg] [-o table|json]
//   simulate trace [--workspaces=N] [--days=N] [--seed=N] [--start=TIME]
//            [--mix=CLASS=W,..] [--burst-class=CLASS]   a synthetic trace (CSV) on stdout
#ifndef WSCHED_SERVER_CLI_SIMULATE_COMMAND_H_
#define WSCHED_SERVER_CLI_SIMULATE_COMMAND_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/cli/options.h"
#include "server/core/catalog.h"
#include "server/simulate/workload.h"

namespace wsched::cli {

int SimulateCommand(const std::vector<std::string>& args, const Options& options);

// Node start and driver install per pool of `catalog` from a timings file:
// the JSON of `wschedctl pools -o json` (or `get pool NAME -o json`), whose
// Pool.timings carry the server's measured medians and its defaults. A pool
// with node start samples takes their median, else the server's default;
// driver install takes the median of the kernel with most samples, else 0
// (no install measured: the image brings its driver). Pools not in the file
// keep what `timings` has. InvalidArgument naming the file for JSON that is
// no pool listing.
absl::Status ReadTimingsExport(absl::string_view json, absl::string_view file,
                               const core::Catalog& catalog,
                               std::map<std::string, simulate::PoolTimings>& timings);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_SIMULATE_COMMAND_H_
