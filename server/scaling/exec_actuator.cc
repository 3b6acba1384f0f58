#include "server/scaling/exec_actuator.h"

#include <algorithm>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace wsched::scaling {
namespace {

// What the logs keep of a run's output: its end, where the error is.
constexpr size_t kOutputTailBytes = 4096;

// Names go into a comma-separated variable and onto a cloud CLI's command
// line; anything odd is refused rather than passed on.
absl::Status CheckPassable(const PoolSignal& signal) {
  auto bad = [](const std::string& s) {
    return s.empty() || s.size() > 253 || std::any_of(s.begin(), s.end(), [](unsigned char c) {
             return c == ',' || c == '=' || c <= ' ' || c == 0x7f;
           });
  };
  if (bad(signal.pool)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool id \"", signal.pool, "\" cannot be passed to a command"));
  }
  std::vector<std::string> nodes = signal.nodes_to_remove;
  nodes.insert(nodes.end(), signal.lost_nodes.begin(), signal.lost_nodes.end());
  for (const std::string& node : nodes) {
    if (bad(node)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node name \"", node, "\" in pool ", signal.pool, " cannot be passed to a command"));
    }
  }
  if (signal.target_size < 0) return absl::InvalidArgumentError("negative target size");
  return absl::OkStatus();
}

// OK: exit status 0. Unavailable: non-zero exit or killed by a signal.
// DeadlineExceeded: ran past the timeout. Cancelled: stopped by Stop().
// NotFound and the like: could not start.
absl::Status AttemptStatus(const std::string& command,
                           const absl::StatusOr<process::Result>& result, absl::Duration timeout) {
  if (!result.ok()) return result.status();
  if (result->timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(command, " did not finish within ", absl::FormatDuration(timeout)));
  }
  if (result->cancelled) return absl::CancelledError(absl::StrCat(command, " stopped at shutdown"));
  if (!result->succeeded()) {
    return absl::UnavailableError(
        absl::StrCat(command, " failed with ", process::DescribeExit(*result)));
  }
  return absl::OkStatus();
}

}  // namespace

process::Command BuildInvocation(const std::vector<std::string>& command,
                                 const std::vector<std::pair<std::string, std::string>>& extra_env,
                                 const PoolSignal& signal) {
  std::string nodes = absl::StrJoin(signal.nodes_to_remove, ",");
  std::string reasons = JoinReasonNames(signal.reasons);
  process::Command spec;
  spec.argv = command;
  spec.argv.push_back(absl::StrCat("--pool=", signal.pool));
  spec.argv.push_back(absl::StrCat("--generation=", signal.generation));
  spec.argv.push_back(absl::StrCat("--current=", signal.current_size));
  spec.argv.push_back(absl::StrCat("--target=", signal.target_size));
  spec.argv.push_back(absl::StrCat("--nodes-to-remove=", nodes));
  spec.argv.push_back(absl::StrCat("--reason=", reasons));
  spec.env = extra_env;
  spec.env.emplace_back("WSCHED_POOL", signal.pool);
  spec.env.emplace_back("WSCHED_GENERATION", absl::StrCat(signal.generation));
  spec.env.emplace_back("WSCHED_CURRENT_SIZE", absl::StrCat(signal.current_size));
  spec.env.emplace_back("WSCHED_TARGET_SIZE", absl::StrCat(signal.target_size));
  spec.env.emplace_back("WSCHED_NODES_TO_REMOVE", nodes);
  // Only in the environment: scripts written before it may refuse unknown
  // arguments.
  spec.env.emplace_back("WSCHED_LOST_NODES", absl::StrJoin(signal.lost_nodes, ","));
  spec.env.emplace_back("WSCHED_REASON", reasons);
  spec.env.emplace_back("WSCHED_DETAIL", signal.detail);
  return spec;
}

absl::StatusOr<std::unique_ptr<ExecActuator>> ExecActuator::Create(ExecActuatorOptions options) {
  if (options.command.empty() || options.command[0].empty()) {
    return absl::InvalidArgumentError("exec actuator: command is empty");
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("exec actuator: timeout must be positive");
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError("exec actuator: max_attempts must be >= 1");
  }
  if (options.workers < 1) return absl::InvalidArgumentError("exec actuator: workers must be >= 1");
  for (const auto& [name, value] : options.extra_env) {
    if (name.empty() || absl::StrContains(name, '=') || absl::StartsWith(name, "WSCHED_POOL") ||
        absl::StartsWith(name, "WSCHED_TARGET")) {
      return absl::InvalidArgumentError(
          absl::StrCat("exec actuator: extra_env name \"", name, "\" is not allowed"));
    }
  }
  std::unique_ptr<ExecActuator> actuator(new ExecActuator(std::move(options)));
  absl::Status started = actuator->StartWorkers();
  if (!started.ok()) return started;  // The destructor joins those that started.
  return actuator;
}

ExecActuator::ExecActuator(ExecActuatorOptions options) : options_(std::move(options)) {}

absl::Status ExecActuator::StartWorkers() {
  absl::MutexLock lock(&stop_mu_);
  try {
    for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(
        absl::StrCat("exec actuator: cannot start worker threads: ", error.what()));
  }
  return absl::OkStatus();
}

ExecActuator::~ExecActuator() { Stop(); }

absl::Status ExecActuator::Submit(const PoolSignal& signal) {
  absl::Status passable = CheckPassable(signal);
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::FailedPreconditionError("exec actuator is stopped");
  if (!passable.ok()) {
    ++stats_.rejected;
    return passable;
  }
  ++stats_.submitted;
  PoolQueue& queue = pools_[signal.pool];
  if (queue.waiting) {
    ++stats_.replaced;
    queue.waiting.reset();
  }
  // Levels, not deltas: a repeat of what was last applied needs no run.
  if (!queue.running && queue.applied_generation == signal.generation) {
    ++stats_.already_applied;
    return absl::OkStatus();
  }
  bool was_queued = std::find(ready_.begin(), ready_.end(), signal.pool) != ready_.end();
  queue.waiting = signal;
  if (!queue.running && !was_queued) ready_.push_back(signal.pool);
  return absl::OkStatus();
}

void ExecActuator::WorkerLoop() {
  while (true) {
    PoolSignal signal;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ExecActuator* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->ready_.empty();
          },
          this));
      if (stopping_) return;
      std::string pool = ready_.front();
      ready_.pop_front();
      PoolQueue& queue = pools_[pool];
      if (!queue.waiting) continue;
      signal = std::move(*queue.waiting);
      queue.waiting.reset();
      queue.running = true;
    }
    Apply(signal);
    absl::MutexLock lock(&mu_);
    PoolQueue& queue = pools_[signal.pool];
    queue.running = false;
    if (queue.waiting && !stopping_) ready_.push_back(signal.pool);
  }
}

void ExecActuator::Apply(const PoolSignal& signal) {
  process::Command spec = BuildInvocation(options_.command, options_.extra_env, signal);
  spec.timeout = options_.timeout;
  spec.kill_grace = options_.stop_grace;
  spec.output_limit = kOutputTailBytes;
  spec.keep = process::Keep::kTail;
  spec.merge_stderr = true;
  spec.cancelled = [this] {
    absl::MutexLock lock(&mu_);
    return stopping_;
  };
  absl::Duration pause = options_.retry_initial;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1) {
      absl::Status waited = WaitBeforeRetry(signal.pool, pause);
      if (!waited.ok()) {
        Report({.pool = signal.pool,
                .generation = signal.generation,
                .attempt = attempt - 1,
                .final = true,
                .status = waited});
        return;
      }
      pause = std::min(pause * 2, options_.retry_max);
    }
    const absl::Time started = absl::Now();
    absl::StatusOr<process::Result> result = process::RunCommand(spec);
    absl::Status status = AttemptStatus(spec.argv[0], result, spec.timeout);
    ActuatorAttempt report{.pool = signal.pool,
                           .generation = signal.generation,
                           .attempt = attempt,
                           .final = true,
                           .status = status,
                           .output_tail = result.ok() ? std::move(result->out.text) : "",
                           .took = result.ok() ? result->took : absl::Now() - started};
    bool done = status.ok() || absl::IsCancelled(status) || attempt == options_.max_attempts;
    report.final = done;
    {
      absl::MutexLock lock(&mu_);
      ++stats_.attempts;
      if (attempt > 1) ++stats_.retries;
      if (absl::IsDeadlineExceeded(status)) ++stats_.timeouts;
      if (status.ok()) {
        ++stats_.succeeded;
        pools_[signal.pool].applied_generation = signal.generation;
      } else if (done && !absl::IsCancelled(status)) {
        ++stats_.failed;
      }
    }
    Report(report);
    if (done) return;
  }
}

absl::Status ExecActuator::WaitBeforeRetry(const std::string& pool, absl::Duration pause) {
  absl::MutexLock lock(&mu_);
  struct Args {
    ExecActuator* self;
    const std::string* pool;
  } args{this, &pool};
  auto interrupted = [](Args* a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(a->self->mu_) {
    return a->self->stopping_ || a->self->pools_[*a->pool].waiting.has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(+interrupted, &args), pause);
  if (stopping_) return absl::CancelledError("not retried: the actuator is stopping");
  if (pools_[pool].waiting) {
    // The newer signal is the current level; the worker runs it next.
    ++stats_.replaced;
    return absl::AbortedError("not retried: a newer signal replaced it");
  }
  return absl::OkStatus();
}

void ExecActuator::Report(const ActuatorAttempt& attempt) {
  if (!options_.on_attempt) return;
  try {
    options_.on_attempt(attempt);
  } catch (...) {
    // A logging callback must not take the actuator down.
  }
}

bool ExecActuator::Idle() const {
  if (!ready_.empty()) return false;
  return std::none_of(pools_.begin(), pools_.end(), [](const auto& entry) {
    return entry.second.running || entry.second.waiting.has_value();
  });
}

bool ExecActuator::WaitUntilIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(
          +[](ExecActuator* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) { return self->Idle(); },
          this),
      timeout);
}

ExecActuatorStats ExecActuator::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void ExecActuator::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    ready_.clear();
    for (auto& [pool, queue] : pools_) queue.waiting.reset();
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
}

}  // namespace wsched::scaling
