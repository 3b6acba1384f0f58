// Runs a helper binary (nvidia-smi) and captures its output, with a deadline:
// a wedged driver can make nvidia-smi hang, and the heartbeat must go on.
#ifndef WSCHED_SERVER_AGENT_SUBPROCESS_H_
#define WSCHED_SERVER_AGENT_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wsched::agent {

// Runs argv[0] (searched in PATH when it has no '/') without a shell and
// returns its stdout. NotFound when the binary does not exist,
// DeadlineExceeded (after killing it) when it outlives `timeout`, Unavailable
// when it exits non-zero (with the start of its output in the message).
absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& argv,
                                          absl::Duration timeout);

// What a finished command printed (stdout and stderr together, in order) and
// its exit status.
struct CommandOutput {
  std::string output;
  int exit_status = 0;
  int signal = 0;  // Non-zero when killed by that signal (exit_status is then -1).
};

// Like RunAndCapture, but a non-zero exit is a result, not an error:
// nvidia-smi exits non-zero when one GPU is lost and still prints the
// others, and says which GPU on stderr.
absl::StatusOr<CommandOutput> RunAndCaptureAll(const std::vector<std::string>& argv,
                                               absl::Duration timeout);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_SUBPROCESS_H_
