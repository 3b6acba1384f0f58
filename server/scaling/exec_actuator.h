// ExecActuator: applies scaling signals by running an admin-configured
// command (a cloud CLI wrapper, see deploy/actuators/) once per signal.
//
// Contract with the command (also in deploy/actuators/README.md): the argv is
// run without a shell, with
//   env  WSCHED_POOL, WSCHED_GENERATION, WSCHED_CURRENT_SIZE,
//        WSCHED_TARGET_SIZE, WSCHED_NODES_TO_REMOVE (comma-separated),
//        WSCHED_LOST_NODES (comma-separated lost nodes still holding
//        workspaces, to replace), WSCHED_REASON (comma-separated reason
//        names), WSCHED_DETAIL
//   args --pool=... --generation=... --current=... --target=...
//        --nodes-to-remove=... --reason=...   (appended to the argv)
// Exit status 0 means applied. Commands must be idempotent: a signal can be
// run again after a retry or a restart.
//
// Runs never overlap per pool: a signal for a pool whose command is running
// waits, and only the newest waiting one is kept (signals are levels, not
// deltas). A newer signal also replaces a failed one waiting for its retry.
#ifndef WSCHED_SERVER_SCALING_EXEC_ACTUATOR_H_
#define WSCHED_SERVER_SCALING_EXEC_ACTUATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/process/process_runner.h"
#include "server/scaling/scaling_signal.h"

namespace wsched::scaling {

// The outcome of one attempt to apply one signal.
struct ActuatorAttempt {
  std::string pool;
  int64_t generation = 0;
  int attempt = 1;
  // No further attempt follows for this signal (success, retries used up,
  // replaced by a newer signal, or shutdown).
  bool final = false;
  absl::Status status;
  std::string output_tail;
  absl::Duration took;
};

struct ExecActuatorOptions {
  std::vector<std::string> command;
  // Fixed settings for the command (e.g. the ASG name), set before the
  // signal's own variables.
  std::vector<std::pair<std::string, std::string>> extra_env;
  absl::Duration timeout = absl::Minutes(5);
  int max_attempts = 3;
  // Pause before the second attempt; doubles per attempt, capped.
  absl::Duration retry_initial = absl::Seconds(2);
  absl::Duration retry_max = absl::Minutes(1);
  // Pools run in parallel up to this many.
  int workers = 2;
  // At Stop() or the timeout: how long a running command gets after SIGTERM.
  absl::Duration stop_grace = absl::Seconds(5);
  // Called (from a worker thread, no lock held) after every attempt: the
  // place to log failures. Exceptions it throws are swallowed.
  std::function<void(const ActuatorAttempt&)> on_attempt;
};

struct ExecActuatorStats {
  int64_t submitted = 0;
  int64_t rejected = 0;         // Invalid signals.
  int64_t already_applied = 0;  // Same generation as the last success; not rerun.
  // Signals a newer one replaced while waiting to run or to be retried.
  int64_t replaced = 0;
  int64_t attempts = 0;
  int64_t retries = 0;
  int64_t timeouts = 0;
  int64_t succeeded = 0;  // Signals applied.
  int64_t failed = 0;     // Signals given up on after max_attempts.
  friend bool operator==(const ExecActuatorStats&, const ExecActuatorStats&) = default;
};

// The argv and environment a signal turns into (exposed for tests).
process::Command BuildInvocation(const std::vector<std::string>& command,
                                 const std::vector<std::pair<std::string, std::string>>& extra_env,
                                 const PoolSignal& signal);

class ExecActuator {
 public:
  // Validates the options and starts the worker threads.
  static absl::StatusOr<std::unique_ptr<ExecActuator>> Create(ExecActuatorOptions options);
  ExecActuator(const ExecActuator&) = delete;
  ExecActuator& operator=(const ExecActuator&) = delete;
  ~ExecActuator();  // Stop().

  // Queues the signal for its pool and returns at once. InvalidArgument for
  // a signal that cannot be passed on safely (no pool, empty node names or
  // names with ','), FailedPrecondition after Stop().
  absl::Status Submit(const PoolSignal& signal);

  // Drops waiting signals, stops running commands (SIGTERM, then SIGKILL
  // after stop_grace) and joins the workers. Idempotent.
  void Stop();

  ExecActuatorStats stats() const;
  // True once nothing is waiting or running (tests and graceful drains).
  bool WaitUntilIdle(absl::Duration timeout);

 private:
  struct PoolQueue {
    std::optional<PoolSignal> waiting;
    bool running = false;
    std::optional<int64_t> applied_generation;
  };

  explicit ExecActuator(ExecActuatorOptions options);
  absl::Status StartWorkers();
  void WorkerLoop();
  // Runs one signal with retries; returns with mu_ not held.
  void Apply(const PoolSignal& signal);
  // Sleeps before a retry. Aborted when a newer signal for the pool
  // arrives meanwhile, Cancelled when Stop() is called.
  absl::Status WaitBeforeRetry(const std::string& pool, absl::Duration pause);
  void Report(const ActuatorAttempt& attempt);
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ExecActuatorOptions options_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, PoolQueue> pools_ ABSL_GUARDED_BY(mu_);
  // Pools with a waiting signal and no run in progress, oldest first.
  std::deque<std::string> ready_ ABSL_GUARDED_BY(mu_);
  ExecActuatorStats stats_ ABSL_GUARDED_BY(mu_);
  // Serializes Stop() callers; Stop() joins the workers.
  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(stop_mu_);
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_EXEC_ACTUATOR_H_
