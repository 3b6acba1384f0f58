// One-line, timestamped messages on stderr: journald and container runtimes
// collect stderr, so the agent needs nothing more.
#ifndef WSCHED_SERVER_AGENT_LOG_H_
#define WSCHED_SERVER_AGENT_LOG_H_

#include "absl/strings/string_view.h"

namespace wsched::agent {

void Log(absl::string_view message);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_LOG_H_
