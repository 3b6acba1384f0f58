#include "server/agent/driver_runner.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::agent {
namespace {

// The podman client outlives its container's --timeout by this much before
// the agent kills the client's process group itself.
constexpr absl::Duration kClientGrace = absl::Minutes(1);

bool IsUrl(absl::string_view cache) { return absl::StrContains(cache, "://"); }

// "/" + "lib/modules" -> "/lib/modules"; "/tmp/tree" -> "/tmp/tree/lib/modules".
std::string BelowRoot(const std::string& root, absl::string_view path) {
  absl::string_view base = absl::StripSuffix(root, "/");
  return absl::StrCat(base, path);
}

int64_t TimeoutSeconds(absl::Duration timeout) {
  return std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(timeout, absl::Seconds(1))));
}

std::string KeepPrintable(absl::string_view line) {
  std::string out(line);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

// Writes the whole log; "" when it cannot (the report still carries the tail).
std::string KeepLog(const std::string& log_dir, const DriverJob& job, absl::string_view log) {
  if (log_dir.empty()) return "";
  const std::string path = absl::StrCat(log_dir, "/driver-install-", job.kernel, ".log");
  std::ofstream out(path, std::ios::trunc);
  if (!out) return "";
  out << log;
  return out ? path : "";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ContractEnvironment(
    const DriverRunnerOptions& options, const DriverJob& job) {
  return {{"WSCHED_NODE", job.node},
          {"WSCHED_KERNEL", job.kernel},
          {"WSCHED_OS", absl::StrCat(job.os_id, job.os_version)},
          {"WSCHED_OS_ID", job.os_id},
          {"WSCHED_OS_VERSION", job.os_version},
          {"WSCHED_DRIVER_VERSION", job.driver_version},
          {"WSCHED_IMAGE", job.image},
          {"WSCHED_DRIVER_CACHE", IsUrl(options.cache) ? options.cache : kCacheMount},
          {"WSCHED_TIMEOUT_SECONDS", absl::StrCat(TimeoutSeconds(options.timeout))}};
}

std::vector<std::string> PodmanRunArgv(const DriverRunnerOptions& options, const DriverJob& job) {
  std::vector<std::string> argv = options.podman;
  for (const char* arg : {"run", "--rm", "--replace", "--name", kContainerName, "--privileged",
                          "--network", "host", "--pull", "missing"}) {
    argv.emplace_back(arg);
  }
  argv.push_back(absl::StrCat("--timeout=", TimeoutSeconds(options.timeout)));
  auto volume = [&](const std::string& spec) {
    argv.emplace_back("-v");
    argv.push_back(spec);
  };
  volume(absl::StrCat(BelowRoot(options.host_root, "/lib/modules"), ":/lib/modules"));
  volume(absl::StrCat(BelowRoot(options.host_root, "/usr/src"), ":/usr/src"));
  if (!options.cache.empty() && !IsUrl(options.cache)) {
    volume(absl::StrCat(options.cache, ":", kCacheMount));
  }
  for (const std::string& extra : options.extra_volumes) volume(extra);
  for (const auto& [name, value] : ContractEnvironment(options, job)) {
    argv.emplace_back("-e");
    argv.push_back(absl::StrCat(name, "=", value));
  }
  argv.push_back(job.image);
  return argv;
}

std::string LogTail(absl::string_view log, int lines, size_t max_bytes) {
  std::vector<std::string> kept;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) kept.push_back(KeepPrintable(line));
  }
  if (kept.size() > static_cast<size_t>(lines)) kept.erase(kept.begin(), kept.end() - lines);
  std::string tail = absl::StrJoin(kept, " | ");
  if (tail.size() > max_bytes) tail = "..." + tail.substr(tail.size() - (max_bytes - 3));
  return tail;
}

DriverInstallOutcome OutcomeOf(const DriverJob& job, const absl::StatusOr<process::Result>& run,
                               absl::Duration timeout) {
  DriverInstallOutcome outcome;
  if (!run.ok()) {
    outcome.detail = absl::StrCat("the installer could not run: ", run.status().message());
    return outcome;
  }
  const std::string& log = run->out.text;
  outcome.took = run->took;
  outcome.log_tail = LogTail(log);
  outcome.cache = core::DriverCacheReportIn(log);
  // podman's --timeout kills the container: the client exits non-zero at
  // about the timeout; the agent's own deadline is later (kClientGrace).
  const bool timed_out = run->timed_out || (!run->succeeded() && run->took >= timeout);
  if (run->succeeded() && !timed_out) {
    outcome.succeeded = true;
    outcome.detail = job.driver_version;
  } else if (timed_out) {
    outcome.detail = absl::StrCat("timed out after ", absl::FormatDuration(timeout));
  } else if (run->cancelled) {
    outcome.detail = "cancelled: the agent stopped";
  } else {
    outcome.detail = process::DescribeExit(*run);
  }
  return outcome;
}

bool RetryBackoff::Due(const DriverJob& job, absl::Time now) const {
  auto it = attempts_.find(Key(job));
  return it == attempts_.end() || now >= it->second.next;
}

absl::Time RetryBackoff::Failed(const DriverJob& job, absl::Time now) {
  Attempts& attempts = attempts_[Key(job)];
  absl::Duration wait = initial_;
  for (int i = 0; i < attempts.failures && wait < max_; ++i) wait *= 2;
  attempts.failures++;
  attempts.next = now + std::min(wait, max_);
  return attempts.next;
}

void RetryBackoff::Succeeded(const DriverJob& job) { attempts_.erase(Key(job)); }

std::string RetryBackoff::Key(const DriverJob& job) {
  return absl::StrJoin({job.kernel, job.os_id, job.os_version, job.driver_version, job.image}, "\n");
}

DriverInstaller::DriverInstaller(DriverRunnerOptions options, Runner run,
                                 std::function<void()> finished)
    : options_(std::move(options)), run_(std::move(run)), finished_(std::move(finished)) {}

DriverInstaller::~DriverInstaller() {
  if (thread_.joinable()) thread_.join();
}

bool DriverInstaller::Start(const DriverJob& job) {
  {
    absl::MutexLock lock(&mu_);
    if (running_) return false;
    running_ = true;
    cancelled_ = false;
  }
  if (thread_.joinable()) thread_.join();  // The previous run has ended.
  thread_ = std::thread([this, job] { RunJob(job); });
  return true;
}

bool DriverInstaller::running() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

std::optional<std::pair<DriverJob, DriverInstallOutcome>> DriverInstaller::TakeFinished() {
  absl::MutexLock lock(&mu_);
  std::optional<std::pair<DriverJob, DriverInstallOutcome>> taken = std::move(finished_run_);
  finished_run_.reset();
  return taken;
}

void DriverInstaller::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

void DriverInstaller::RunJob(DriverJob job) {
  process::Command command;
  command.argv = PodmanRunArgv(options_, job);
  // podman's own --timeout kills the container; this bounds the client.
  command.timeout = options_.timeout + kClientGrace;
  command.kill_grace = absl::Seconds(10);
  command.merge_stderr = true;
  command.keep = process::Keep::kTail;
  command.cancelled = [this] {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  };
  absl::StatusOr<process::Result> run = run_(command);
  DriverInstallOutcome outcome = OutcomeOf(job, run, options_.timeout);
  if (run.ok()) outcome.log_path = KeepLog(options_.log_dir, job, run->out.text);
  if (run.ok() && (run->timed_out || run->cancelled)) {
    // The client was killed: its container may live on. Best effort.
    process::Command remove;
    remove.argv = options_.podman;
    for (const char* arg : {"rm", "--force", kContainerName}) remove.argv.emplace_back(arg);
    (void)run_(remove);
  }
  {
    absl::MutexLock lock(&mu_);
    finished_run_ = std::make_pair(std::move(job), std::move(outcome));
    running_ = false;
  }
  if (finished_) finished_();
}

}  // namespace wsched::agent
