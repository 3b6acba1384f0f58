#include "server/scaling/driver_install_exec.h"

#include <algorithm>
#include <set>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::scaling {
namespace {


// WSCHED_TIMEOUT_SECONDS: whole seconds, rounded up, at least 1.
int64_t TimeoutSeconds(absl::Duration timeout) {
  return std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(timeout, absl::Seconds(1))));
}

// A NUL byte cannot reach the command: it would cut the variable short.
bool HasNul(absl::string_view s) { return absl::StrContains(s, '\0'); }

bool JobPassable(const DriverInstallJob& job) {
  return !HasNul(job.node) && !HasNul(job.kernel) && !HasNul(job.os_id) &&
         !HasNul(job.os_version) && !HasNul(job.driver_version) && !HasNul(job.image);
}

// The last `max_bytes` of `text`, not starting inside a UTF-8 sequence.
std::string TailOf(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t start = text.size() - max_bytes;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

}  // namespace

process::Command BuildDriverInstallInvocation(const DriverInstallExecOptions& options,
                                              const DriverInstallJob& job) {
  const std::vector<std::pair<std::string, std::string>> contract = {
      {"WSCHED_NODE", job.node},
      {"WSCHED_KERNEL", job.kernel},
      {"WSCHED_OS", absl::StrCat(job.os_id, job.os_version)},
      {"WSCHED_OS_ID", job.os_id},
      {"WSCHED_OS_VERSION", job.os_version},
      {"WSCHED_DRIVER_VERSION", job.driver_version},
      {"WSCHED_IMAGE", job.image},
      {"WSCHED_DRIVER_CACHE", options.driver_cache},
      {"WSCHED_TIMEOUT_SECONDS", absl::StrCat(TimeoutSeconds(options.timeout))}};
  std::set<std::string, std::less<>> contract_names;
  for (const auto& entry : contract) contract_names.insert(entry.first);

  process::Command spec;
  spec.argv = options.command;
  // Names given twice in the environment are read differently by different
  // programs (getenv takes the first): each name goes in once, its last
  // value kept, the contract's over extra_env's.
  for (const auto& extra : options.extra_env) {
    if (contract_names.contains(extra.first)) continue;
    auto same = std::find_if(spec.env.begin(), spec.env.end(),
                             [&extra](const auto& entry) { return entry.first == extra.first; });
    if (same != spec.env.end()) {
      same->second = extra.second;
    } else {
      spec.env.push_back(extra);
    }
  }
  spec.env.insert(spec.env.end(), contract.begin(), contract.end());
  spec.timeout = options.timeout;
  spec.kill_grace = options.stop_grace;
  // The end of the output, where the error is; the cache line is searched
  // for in all of it, the report keeps less (kDriverInstallLogTailBytes).
  spec.output_limit = kDriverInstallParsedOutputBytes;
  spec.keep = process::Keep::kTail;
  spec.merge_stderr = true;
  return spec;
}

absl::StatusOr<std::unique_ptr<DriverInstallExec>> DriverInstallExec::Create(
    DriverInstallExecOptions options) {
  if (options.command.empty() || options.command[0].empty()) {
    return absl::InvalidArgumentError("driver install exec: command is empty");
  }
  for (const std::string& arg : options.command) {
    if (HasNul(arg)) return absl::InvalidArgumentError("driver install exec: NUL in command");
  }
  if (HasNul(options.driver_cache)) {
    return absl::InvalidArgumentError("driver install exec: NUL in driver_cache");
  }
  for (const auto& [name, value] : options.extra_env) {
    if (name.empty() || absl::StrContains(name, '=') || HasNul(name) || HasNul(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("driver install exec: extra_env entry \"", absl::CEscape(name),
                       "\" cannot be passed to a command"));
    }
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("driver install exec: timeout must be positive");
  }
  if (options.workers < 1) {
    return absl::InvalidArgumentError("driver install exec: workers must be >= 1");
  }
  if (options.retry_initial < absl::ZeroDuration() || options.retry_max < options.retry_initial) {
    return absl::InvalidArgumentError(
        "driver install exec: need 0 <= retry_initial <= retry_max");
  }
  if (options.stop_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("driver install exec: stop_grace must not be negative");
  }
  if (!options.clock) return absl::InvalidArgumentError("driver install exec: no clock");
  std::unique_ptr<DriverInstallExec> exec(new DriverInstallExec(std::move(options)));
  absl::Status started = exec->StartWorkers();
  if (!started.ok()) return started;  // The destructor joins those that started.
  return exec;
}

DriverInstallExec::DriverInstallExec(DriverInstallExecOptions options)
    : options_(std::move(options)) {}

absl::Status DriverInstallExec::StartWorkers() {
  absl::MutexLock lock(&stop_mu_);
  try {
    for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(
        absl::StrCat("driver install exec: cannot start worker threads: ", error.what()));
  }
  return absl::OkStatus();
}

DriverInstallExec::~DriverInstallExec() { Stop(); }

absl::Status DriverInstallExec::Offer(const DriverInstallJob& job) {
  const absl::Time now = options_.clock();  // Read outside the lock: it is the caller's code.
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::FailedPreconditionError("driver install exec is stopped");
  if (job.node.empty()) return absl::InvalidArgumentError("driver install job without a node");
  if (!JobPassable(job)) {
    return absl::InvalidArgumentError(
        absl::StrCat("driver install job for ", absl::CEscape(job.node),
                     " has a NUL byte and cannot be passed to a command"));
  }
  ++stats_.offered;
  NodeState& state = nodes_[job.node];
  if (state.running) {
    ++stats_.skipped_running;
    return absl::OkStatus();
  }
  if (state.failed_job == job && now < state.retry_at) {
    ++stats_.skipped_backoff;
    return absl::OkStatus();
  }
  if (state.waiting) {
    ++stats_.replaced;
    state.waiting = job;
    return absl::OkStatus();
  }
  state.waiting = job;
  ready_.push_back(job.node);
  return absl::OkStatus();
}

void DriverInstallExec::Forget(const std::string& node) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  if (it->second.running) {
    it->second.forgotten = true;
    it->second.failed_job.reset();
    it->second.failures = 0;
    it->second.retry_at = absl::InfinitePast();
    return;
  }
  std::erase(ready_, node);
  nodes_.erase(it);
}

void DriverInstallExec::WorkerLoop() {
  while (true) {
    DriverInstallJob job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](DriverInstallExec* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->ready_.empty();
          },
          this));
      if (stopping_) return;
      std::string node = std::move(ready_.front());
      ready_.pop_front();
      auto it = nodes_.find(node);
      if (it == nodes_.end() || it->second.running || !it->second.waiting) continue;
      job = std::move(*it->second.waiting);
      it->second.waiting.reset();
      it->second.running = true;
      it->second.forgotten = false;
      ++stats_.started;
    }
    ReportStart(job);
    DriverInstallOutcome outcome = Run(job);
    const absl::Time now = options_.clock();
    {
      absl::MutexLock lock(&mu_);
      Finish(outcome, now);
    }
    ReportEnd(outcome);
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(job.node);
    if (it == nodes_.end()) continue;  // Not reached: a running node is kept.
    it->second.running = false;
    it->second.forgotten = false;
    if (!it->second.waiting && !it->second.failed_job) nodes_.erase(it);
  }
}

DriverInstallOutcome DriverInstallExec::Run(const DriverInstallJob& job) {
  DriverInstallOutcome outcome{.job = job};
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      outcome.stopped = true;
      outcome.detail = "stopped before it ran: the driver install runner is stopping";
      return outcome;
    }
  }
  process::Command spec = BuildDriverInstallInvocation(options_, job);
  spec.cancelled = [this] {
    absl::MutexLock lock(&mu_);
    return stopping_;
  };
  absl::StatusOr<process::Result> result = process::RunCommand(spec);
  if (!result.ok()) {
    outcome.detail = absl::StrCat("the installer could not run: ", result.status().message());
    return outcome;
  }
  const std::string& output = result->out.text;
  outcome.took = result->took;
  outcome.cache = core::DriverCacheReportIn(output);
  outcome.log_tail = TailOf(output, kDriverInstallLogTailBytes);
  if (result->succeeded()) {
    outcome.succeeded = true;
    outcome.detail = job.driver_version;
  } else if (result->cancelled) {
    outcome.stopped = true;
    outcome.detail = "stopped: the driver install runner is stopping";
  } else if (result->timed_out) {
    outcome.timed_out = true;
    outcome.detail = absl::StrCat("timed out after ", absl::FormatDuration(options_.timeout));
  } else {
    outcome.detail = process::DescribeExit(*result);
  }
  return outcome;
}

void DriverInstallExec::Finish(const DriverInstallOutcome& outcome, absl::Time now) {
  NodeState& state = nodes_[outcome.job.node];
  if (outcome.stopped) {
    ++stats_.stopped;
    return;
  }
  if (outcome.succeeded) {
    ++stats_.succeeded;
    state.failed_job.reset();
    state.failures = 0;
    state.retry_at = absl::InfinitePast();
    return;
  }
  ++stats_.failed;
  if (outcome.timed_out) ++stats_.timed_out;
  if (state.forgotten) return;
  if (state.failed_job != outcome.job) {
    state.failed_job = outcome.job;
    state.failures = 0;
  }
  ++state.failures;
  state.retry_at = now + BackoffAfter(state.failures);
}

absl::Duration DriverInstallExec::BackoffAfter(int failures) const {
  absl::Duration wait = options_.retry_initial;
  for (int i = 1; i < failures && wait < options_.retry_max; ++i) wait *= 2;
  return std::min(wait, options_.retry_max);
}

void DriverInstallExec::ReportStart(const DriverInstallJob& job) {
  if (!options_.on_start) return;
  try {
    options_.on_start(job);
  } catch (...) {
    // A recording callback must not take the runner down.
  }
}

void DriverInstallExec::ReportEnd(const DriverInstallOutcome& outcome) {
  if (!options_.on_end) return;
  try {
    options_.on_end(outcome);
  } catch (...) {
    // A recording callback must not take the runner down.
  }
}

bool DriverInstallExec::Idle() const {
  if (!ready_.empty()) return false;
  return std::none_of(nodes_.begin(), nodes_.end(), [](const auto& entry) {
    return entry.second.running || entry.second.waiting.has_value();
  });
}

bool DriverInstallExec::WaitUntilIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](DriverInstallExec* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->Idle();
          },
          this),
      timeout);
}

DriverInstallExecStats DriverInstallExec::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void DriverInstallExec::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    ready_.clear();
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      it->second.waiting.reset();
      if (!it->second.running && !it->second.failed_job) {
        it = nodes_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
}

}  // namespace wsched::scaling
