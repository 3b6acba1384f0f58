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

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_SUBPROCESS_H_
