// Runs a helper command (nvidia-smi for the agent, an actuator script for the
// scaling leader) to completion and captures what it printed.
//
// The command runs without a shell, with stdin on /dev/null, in a process
// group of its own, with default signal handling (the server and the agent
// block SIGTERM for their own shutdown; a child must not inherit that). At
// the timeout, or when `cancelled` says so, the whole group gets SIGTERM and,
// after `kill_grace`, SIGKILL: a wedged command's children die with it. When
// the command exits, whatever it left running in its group is killed too, so
// no run outlives itself.
#ifndef WSCHED_SERVER_PROCESS_PROCESS_RUNNER_H_
#define WSCHED_SERVER_PROCESS_PROCESS_RUNNER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wsched::process {

// Which part of an output longer than the limit is kept: the start (a
// report to parse) or the end (a log tail, where the error usually is).
enum class Keep { kHead, kTail };

struct Command {
  // argv[0] is searched in PATH when it has no '/'.
  std::vector<std::string> argv;
  // Set on top of the inherited environment (replacing same-named entries).
  std::vector<std::pair<std::string, std::string>> env;
  absl::Duration timeout = absl::Minutes(1);
  // Between SIGTERM and SIGKILL to the group, at the timeout or a cancel.
  absl::Duration kill_grace = absl::Seconds(1);
  // Bytes kept per stream. The rest is still read, so the command never
  // blocks on a full pipe, and counted in Output::dropped_bytes.
  size_t output_limit = 1 << 20;
  Keep keep = Keep::kHead;
  // stderr goes into `out`, interleaved as written, instead of into `err`.
  bool merge_stderr = false;
  // Optional; asked every few milliseconds while the command runs. True
  // stops it as a timeout does.
  std::function<bool()> cancelled;
};

struct Output {
  std::string text;
  int64_t dropped_bytes = 0;  // Read past the limit and not kept.
  bool truncated() const { return dropped_bytes > 0; }
};

struct Result {
  int exit_code = -1;      // Its exit status; -1 when a signal ended it.
  int signal = 0;          // The signal that ended it; 0 when it exited.
  Output out;              // stdout (and stderr with merge_stderr).
  Output err;              // stderr; empty with merge_stderr.
  bool timed_out = false;  // Stopped at the timeout.
  bool cancelled = false;  // Stopped because `cancelled` returned true.
  absl::Duration took;
  // Exited with status 0 on its own.
  bool succeeded() const { return exit_code == 0 && !timed_out && !cancelled; }
};

// "exit status 3" or "killed by signal 9".
std::string DescribeExit(const Result& result);

// Blocks until the command has exited and been reaped. A command that ran
// (whatever its exit) is a Result; an error means it could not be run:
// InvalidArgument (no argv), NotFound (no such binary), Unavailable (the
// kernel refused to start it), Internal (no pipe, poll failed).
absl::StatusOr<Result> RunCommand(const Command& command);

}  // namespace wsched::process

#endif  // WSCHED_SERVER_PROCESS_PROCESS_RUNNER_H_
