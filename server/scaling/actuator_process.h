// Runs one actuator command to completion: no shell, its own process group
// (so a timeout or shutdown kills the whole tree, not just the first shell),
// a deadline, and the tail of its output for the logs.
#ifndef WSCHED_SERVER_SCALING_ACTUATOR_PROCESS_H_
#define WSCHED_SERVER_SCALING_ACTUATOR_PROCESS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace wsched::scaling {

struct ProcessSpec {
  // argv[0] is searched in PATH when it has no '/'.
  std::vector<std::string> argv;
  // Set on top of the inherited environment (replacing same-named ones).
  std::vector<std::pair<std::string, std::string>> env;
  absl::Duration timeout = absl::Minutes(5);
  // On cancellation: SIGTERM to the group, SIGKILL after this long.
  absl::Duration kill_grace = absl::Seconds(5);
};

struct ProcessResult {
  // OK: exit status 0. Unavailable: non-zero exit or killed by a signal.
  // DeadlineExceeded: ran past the timeout (group killed). Cancelled:
  // stopped by `cancelled`. NotFound / Internal: could not start.
  absl::Status status;
  // The last few KiB of stdout and stderr together.
  std::string output_tail;
  absl::Duration took;
};

// Blocks until the command is done. `cancelled` (may be empty) is polled
// every few milliseconds while it runs. Background processes the command
// leaves in its group are killed when it exits, so no run outlives itself.
// Never throws.
ProcessResult RunProcess(const ProcessSpec& spec, const std::function<bool()>& cancelled);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_ACTUATOR_PROCESS_H_
