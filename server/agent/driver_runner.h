// The on-node face of driver installs (docs/agent.md "Driver installs"):
// when its registration or heartbeat answer hands the agent an install job,
// the agent runs the policy's installer image with podman under the
// installer contract, keeps its log, and reports the outcome with its own
// node credential.
//
// The decisions are pure and tested on their own (the podman command line,
// the cache report in the log, the log tail, the retry backoff); the
// DriverInstaller at the bottom is the edge that runs the command on a
// thread of its own, so that heartbeats go on while an install takes
// minutes.
#ifndef WSCHED_SERVER_AGENT_DRIVER_RUNNER_H_
#define WSCHED_SERVER_AGENT_DRIVER_RUNNER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/driver_install.h"
#include "server/process/process_runner.h"

namespace wsched::agent {

// One install the server handed out (wsched.v1.DriverWork).
struct DriverJob {
  std::string node;
  std::string kernel;
  std::string os_id;
  std::string os_version;
  std::string driver_version;
  std::string image;

  friend bool operator==(const DriverJob&, const DriverJob&) = default;
};

struct DriverRunnerOptions {
  // The container runtime's command, argv[0] first ("podman", or podman
  // with storage options in tests).
  std::vector<std::string> podman = {"podman"};
  // The node's root as the agent reads it (--root): the host's /lib/modules
  // and /usr/src are mounted from below it.
  std::string host_root = "/";
  // The driver cache (--driver_cache): a directory on this machine (maybe
  // shared by the pool's nodes), mounted at kCacheMount; or an object-store
  // URL ("s3://bucket/prefix"), passed to the installer as it is.
  std::string cache = "/var/cache/wsched/driver";
  // Longest an install may run; the container is then killed and the
  // install reported failed.
  absl::Duration timeout = absl::Minutes(30);
  // Where each install's whole log is kept: <log_dir>/driver-install-<kernel>.log.
  std::string log_dir;
  // More volumes, "HOST:CONTAINER[:OPTIONS]" (--driver_install_volumes).
  std::vector<std::string> extra_volumes;
  // Between failed attempts at one job: doubling from initial to max.
  absl::Duration initial_backoff = absl::Minutes(1);
  absl::Duration max_backoff = absl::Hours(1);
};

// Where a cache directory appears inside the installer's container.
inline constexpr char kCacheMount[] = "/var/cache/wsched-driver";
// The container's name: one install per node at a time, and a leftover of
// a killed agent is replaced, not run beside.
inline constexpr char kContainerName[] = "wsched-driver-install";

// The installer contract's environment (docs/agent.md "The installer
// contract").
std::vector<std::pair<std::string, std::string>> ContractEnvironment(
    const DriverRunnerOptions& options, const DriverJob& job);

// podman run --rm --replace --name ... --privileged --network host
// --timeout SECONDS -v ROOT/lib/modules:/lib/modules -v ROOT/usr/src:/usr/src
// [-v CACHE:/var/cache/wsched-driver] [-v EXTRA...] -e NAME=VALUE... IMAGE.
std::vector<std::string> PodmanRunArgv(const DriverRunnerOptions& options, const DriverJob& job);


// The last `lines` non-empty lines of `log`, joined by " | ", with control
// characters replaced, at most `max_bytes` (the end kept): what the report
// carries (ReportDriverInstallRequest.log_tail is printable text).
std::string LogTail(absl::string_view log, int lines = 20, size_t max_bytes = 2048);

// What one run of the installer came to.
struct DriverInstallOutcome {
  bool succeeded = false;
  // "exit status 3", "timed out after 30m", "podman: not found", or the
  // driver version on success.
  std::string detail;
  std::string log_tail;
  absl::Duration took;
  core::DriverCache cache = core::DriverCache::kUnknown;
  std::string log_path;  // The whole log; empty when it could not be written.
};

// The outcome of a run that happened (`run`), or of one that could not be
// started (`run` an error).
DriverInstallOutcome OutcomeOf(const DriverJob& job, const absl::StatusOr<process::Result>& run,
                               absl::Duration timeout);

// When a failed job may run again: per job, doubling from initial to max
// after each failure; a job not failed before is due at once. A different
// job (a new kernel, a new policy) starts its own count.
class RetryBackoff {
 public:
  RetryBackoff(absl::Duration initial, absl::Duration max) : initial_(initial), max_(max) {}
  bool Due(const DriverJob& job, absl::Time now) const;
  // The time the job may run again.
  absl::Time Failed(const DriverJob& job, absl::Time now);
  void Succeeded(const DriverJob& job);

 private:
  struct Attempts {
    int failures = 0;
    absl::Time next;
  };
  static std::string Key(const DriverJob& job);
  const absl::Duration initial_;
  const absl::Duration max_;
  std::map<std::string, Attempts> attempts_;
};

// Runs one install at a time on a thread of its own.
class DriverInstaller {
 public:
  // `run` runs the command (process::RunCommand; tests pass fakes);
  // `finished` is called on the installer's thread when a run ends (the
  // agent wakes its loop with it).
  using Runner = std::function<absl::StatusOr<process::Result>(const process::Command&)>;
  DriverInstaller(DriverRunnerOptions options, Runner run, std::function<void()> finished);
  ~DriverInstaller();  // Waits for a running install (the agent stops it first).
  DriverInstaller(const DriverInstaller&) = delete;
  DriverInstaller& operator=(const DriverInstaller&) = delete;

  // Starts `job` unless one is running; false when one is.
  bool Start(const DriverJob& job);
  bool running() const;
  // The finished job and its outcome, once; nullopt while none finished.
  std::optional<std::pair<DriverJob, DriverInstallOutcome>> TakeFinished();
  // Asks a running install to stop (the agent's shutdown): it ends as a
  // failure that is not reported.
  void Cancel();

 private:
  void RunJob(DriverJob job);

  // Constant after construction.
  const DriverRunnerOptions options_;
  const Runner run_;
  const std::function<void()> finished_;

  // State below is protected by mu_.
  mutable absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::pair<DriverJob, DriverInstallOutcome>> finished_run_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // Started by Start, joined by the next Start or the destructor.
};

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_DRIVER_RUNNER_H_
