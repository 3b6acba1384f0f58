// DriverInstallExec: the `cluster` face of driver installs (docs/operations.md
// "Driver installs"). The scaling leader runs an admin-given command once per
// node that needs its driver; the command installs it there (a Kubernetes Job
// pinned to the node, an ssh wrapper around podman, ...).
//
// Contract with the command: the installer contract's environment
// (docs/agent.md "The installer contract"), set on top of the inherited one:
//   WSCHED_NODE, WSCHED_KERNEL, WSCHED_OS (os_id + os_version, "debian12"),
//   WSCHED_OS_ID, WSCHED_OS_VERSION, WSCHED_DRIVER_VERSION, WSCHED_IMAGE,
//   WSCHED_DRIVER_CACHE, WSCHED_TIMEOUT_SECONDS
// and the argv is run as given, without a shell and with no arguments added.
// Exit status 0 means installed and loaded; anything else is a failure whose
// output's tail (stdout and stderr merged) is handed on. A line
// "wsched-driver-cache: hit" or "... miss" in the output says whether the
// build came from the driver cache. At the timeout the command's process
// group gets SIGTERM, then SIGKILL after stop_grace.
//
// One run per node at a time: an Offer for a node whose command runs is
// ignored (the caller offers again on a later tick if the node still needs
// it), and one for a node still waiting for a worker replaces the waiting
// job. After a failure the node's same job is ignored for retry_initial,
// doubling per consecutive failure up to retry_max; a success resets that.
// A different job (a new kernel, a new policy) is not held back by the
// backoff of the one before it and starts its own count, as the agent's
// `node` face does. Different nodes run in parallel, up to `workers`.
#ifndef WSCHED_SERVER_SCALING_DRIVER_INSTALL_EXEC_H_
#define WSCHED_SERVER_SCALING_DRIVER_INSTALL_EXEC_H_

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
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/core/driver_install.h"
#include "server/process/process_runner.h"

namespace wsched::scaling {

// One node's install: what the installer contract passes to the command.
struct DriverInstallJob {
  std::string node;
  std::string kernel;
  std::string os_id;
  std::string os_version;
  std::string driver_version;
  std::string image;

  friend bool operator==(const DriverInstallJob&, const DriverInstallJob&) = default;
};

// What one run of the command came to.
struct DriverInstallOutcome {
  DriverInstallJob job;
  // Exited with status 0 on its own: installed and loaded.
  bool succeeded = false;
  // Ended by Stop() (the leader stepping down or shutting down): not the
  // installer's failure, and no backoff follows. Callers may leave the node
  // as it is for the next leader to offer again.
  bool stopped = false;
  // Of the failures: killed at the timeout.
  bool timed_out = false;
  // The driver version on success; otherwise "exit status 3", "killed by
  // signal 9", "timed out after 30m", "the installer could not run: ...",
  // "stopped: ...".
  std::string detail;
  // The end of the merged stdout and stderr, at most kDriverInstallLogTailBytes,
  // as the command wrote it (cut at a character boundary).
  std::string log_tail;
  absl::Duration took;  // Zero when the command could not be started.
  // The last "wsched-driver-cache: hit|miss" line of the output; kUnknown
  // when there is none.
  core::DriverCache cache = core::DriverCache::kUnknown;
};

// The most of a run's output that DriverInstallOutcome::log_tail keeps.
inline constexpr size_t kDriverInstallLogTailBytes = 4096;
// The most of a run's output (its end) searched for the cache line.
inline constexpr size_t kDriverInstallParsedOutputBytes = 1 << 20;

struct DriverInstallExecOptions {
  // The argv, argv[0] first (searched in PATH when it has no '/').
  std::vector<std::string> command;
  // Fixed settings for the command (a kubeconfig, a namespace), set before
  // the job's own variables: a name the contract sets is the job's.
  std::vector<std::pair<std::string, std::string>> extra_env;
  // WSCHED_DRIVER_CACHE: a directory the installs share, or an object-store
  // URL; passed on as it is.
  std::string driver_cache;
  // Longest a run may take (also WSCHED_TIMEOUT_SECONDS, rounded up).
  absl::Duration timeout = absl::Minutes(30);
  // Nodes installed in parallel, at most.
  int workers = 4;
  // After a node's failed run, its next run of the same job waits this
  // long; doubling per consecutive failure, capped at retry_max.
  absl::Duration retry_initial = absl::Seconds(30);
  absl::Duration retry_max = absl::Minutes(30);
  // At Stop() or the timeout: how long a running command gets after SIGTERM.
  absl::Duration stop_grace = absl::Seconds(10);
  // The time backoffs are measured by (core::WallClock() in the server).
  // Required.
  core::Clock clock;
  // Called from a worker thread with no lock held, right before the command
  // runs: the caller records the node as installing. Exceptions it throws
  // are swallowed.
  std::function<void(const DriverInstallJob&)> on_start;
  // Called from a worker thread with no lock held when a run has ended
  // (also for one ended by Stop()). The node counts as running until it
  // returns. Exceptions it throws are swallowed.
  std::function<void(const DriverInstallOutcome&)> on_end;
};

struct DriverInstallExecStats {
  int64_t offered = 0;  // Valid Offer() calls before Stop().
  int64_t started = 0;  // Runs begun (on_start called).
  int64_t succeeded = 0;
  // Runs that failed, timed out or could not start (not those ended by Stop()).
  int64_t failed = 0;
  int64_t timed_out = 0;  // Of `failed`: killed at the timeout.
  int64_t stopped = 0;    // Runs ended by Stop().
  // Offers ignored: the node's command was running.
  int64_t skipped_running = 0;
  // Offers ignored: the node's same job was in its backoff.
  int64_t skipped_backoff = 0;
  // Offers that took the place of a job still waiting for a worker.
  int64_t replaced = 0;
  friend bool operator==(const DriverInstallExecStats&, const DriverInstallExecStats&) = default;
};

// The command a job turns into: argv as configured; env extra_env, then the
// contract's variables (a same-named extra_env entry is left out, so the
// job's own value is the one the command sees); the timeout, the kill grace,
// and the output kept (merged, its end). `cancelled` is left unset.
process::Command BuildDriverInstallInvocation(const DriverInstallExecOptions& options,
                                              const DriverInstallJob& job);

class DriverInstallExec {
 public:
  // Validates the options and starts the worker threads.
  static absl::StatusOr<std::unique_ptr<DriverInstallExec>> Create(
      DriverInstallExecOptions options);
  DriverInstallExec(const DriverInstallExec&) = delete;
  DriverInstallExec& operator=(const DriverInstallExec&) = delete;
  ~DriverInstallExec();  // Stop().

  // Returns at once. Queues the job for a worker unless the node's command
  // is running (ignored) or the same job is in its backoff (ignored); a job
  // still waiting for a worker is replaced. OK in all those cases.
  // InvalidArgument for an empty node name or a field with a NUL byte,
  // FailedPrecondition after Stop().
  absl::Status Offer(const DriverInstallJob& job);

  // Drops the node's waiting job and its backoff (the node was removed, or
  // is ready). A running command goes on and is reported, but its failure
  // leaves no backoff.
  void Forget(const std::string& node);

  // Drops waiting jobs, stops running commands (SIGTERM, then SIGKILL after
  // stop_grace; their on_end says `stopped`) and joins the workers.
  // Idempotent. Not to be called from on_start or on_end.
  void Stop();

  DriverInstallExecStats stats() const;
  // True once no job is waiting or running (tests and graceful drains).
  bool WaitUntilIdle(absl::Duration timeout);

 private:
  // Per node; kept while the node has a waiting or running job or a backoff.
  struct NodeState {
    std::optional<DriverInstallJob> waiting;
    bool running = false;
    // Forget() was called while the command ran: leave no backoff.
    bool forgotten = false;
    // The job that failed last, its consecutive failures, and when it may
    // run again.
    std::optional<DriverInstallJob> failed_job;
    int failures = 0;
    absl::Time retry_at = absl::InfinitePast();
  };

  explicit DriverInstallExec(DriverInstallExecOptions options);
  absl::Status StartWorkers();
  void WorkerLoop();
  // Runs one job and reports it; called and returns with mu_ not held.
  DriverInstallOutcome Run(const DriverInstallJob& job);
  // Records a run's end: stats and the node's backoff.
  void Finish(const DriverInstallOutcome& outcome, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration BackoffAfter(int failures) const;
  void ReportStart(const DriverInstallJob& job);
  void ReportEnd(const DriverInstallOutcome& outcome);
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction; read by the workers without the lock.
  const DriverInstallExecOptions options_;

  // mu_ guards the queue and per-node state that Offer(), Forget() and
  // Stop() on the caller's threads share with the workers: whether a node
  // waits or runs (the one-run-per-node rule is decided under it), its
  // backoff, the order nodes wait in, the stop flag (also polled by running
  // commands through process::Command::cancelled) and the stats. It is never
  // held while a command runs or a callback is called.
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, NodeState> nodes_ ABSL_GUARDED_BY(mu_);
  // Nodes with a waiting job and no run in progress, oldest first.
  std::deque<std::string> ready_ ABSL_GUARDED_BY(mu_);
  DriverInstallExecStats stats_ ABSL_GUARDED_BY(mu_);
  // Serializes Stop() callers; Stop() joins the workers.
  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(stop_mu_);
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_DRIVER_INSTALL_EXEC_H_
