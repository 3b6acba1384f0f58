// What a simulation replays and how the simulated cloud behaves: workspace
// arrivals, and per pool how long a node takes to start and to get its GPU
// driver.
#ifndef WSCHED_SERVER_SIMULATE_WORKLOAD_H_
#define WSCHED_SERVER_SIMULATE_WORKLOAD_H_

#include <string>

#include "absl/time/time.h"

namespace wsched::simulate {

// One workspace of the trace.
struct Arrival {
  // The trace's id (a usage ledger repeats one for each placement of a
  // workspace); the simulation names workspaces by position instead.
  std::string id;
  absl::Time time;  // When it asks to be placed.
  std::string org;
  std::string project;
  std::string class_id;  // Empty: the catalog's default class.
  // How long it runs once placed: a workspace that waits longer ends later.
  absl::Duration duration;
  int line = 0;  // In the trace file, for messages.
};

// How long the simulated cloud takes, per pool.
struct PoolTimings {
  // Asked for -> registered (what the server measures as node start).
  absl::Duration node_start = absl::Minutes(5);
  // Registered -> driver ready, on GPU pools (what the server measures as a
  // driver install). Zero: the node image has the driver.
  absl::Duration driver_install = absl::ZeroDuration();
  // A MIG GPU of a by_demand pool ordered cut anew -> its new slices
  // registered: the agent's next heartbeat, nvidia-smi's destroy and create,
  // and the registration (docs/agent.md "Re-laying out MIG GPUs").
  absl::Duration mig_relayout = absl::Seconds(15);
  // Where each figure came from, for the report ("flag --node-start",
  // "timings file: median of 5 samples", ...).
  std::string node_start_source = "default";
  std::string driver_install_source = "default";
};

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_WORKLOAD_H_
