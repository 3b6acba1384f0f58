// Readers of a pending workspace beside the placements: each reader thread
// calls GetWorkspace on one workspace that stays pending, over and over, at
// a set pace (as a control plane polls) or as fast as it answers. A
// pending read is the costliest a replica answers (its pending reason and
// estimate; with the FULL view also the fixes proven by running the
// decision again, see docs/placement.md "What would it take"), so a run
// with readers against one without says whether control planes that poll
// their pending workspaces slow placing (loadtest/bench.sh step "reads").
#ifndef WSCHED_LOADTEST_PENDING_READERS_H_
#define WSCHED_LOADTEST_PENDING_READERS_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace wsched::loadtest {

struct PendingReads {
  int64_t calls = 0;
  int64_t errors = 0;
  std::string first_error;
  int64_t fixes = 0;                // Fixes in the last answer read.
  std::string pending_reason;       // Of the last answer read.
  std::vector<int64_t> latency_ns;  // Successful calls only.
  double seconds = 0;               // From the readers' start to Finish.
};

class PendingReaders {
 public:
  struct Options {
    std::string token;
    std::string workspace_id;
    std::string class_id;  // One that stays pending on the run's fleet.
    std::string org_id;
    std::string project_id;
    int readers = 1;
    // BASIC: what a poll asks for; FULL: with the fixes.
    bool full_view = false;
    // Per reader; 0 = each reader calls again as soon as it is answered.
    double reads_per_s = 0;
    absl::Duration rpc_timeout = absl::Seconds(10);
  };

  // Places the workspace, checks that it waits, and starts the readers.
  // FAILED_PRECONDITION when it was placed (the class does not stay
  // pending here); the error of the call otherwise.
  static absl::Status Start(const std::shared_ptr<grpc::Channel>& channel, const Options& options,
                            std::unique_ptr<PendingReaders>* out);
  ~PendingReaders();

  // Stops the readers and sums what they read.
  PendingReads Finish();

 private:
  PendingReaders() = default;

  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point started_;
  std::vector<PendingReads> results_;
  std::vector<std::thread> threads_;
};

}  // namespace wsched::loadtest

#endif  // WSCHED_LOADTEST_PENDING_READERS_H_
