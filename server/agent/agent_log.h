// One-line, timestamped messages on stderr: journald and container runtimes
// collect stderr, so the agent needs nothing more.
#ifndef WSCHED_SERVER_AGENT_AGENT_LOG_H_
#define WSCHED_SERVER_AGENT_AGENT_LOG_H_

#include <string>

#include "absl/strings/string_view.h"

namespace wsched::agent {

// Line breaks inside `message` are written as "\n", so a record is one line.
void Log(absl::string_view message);

// `message` as Log writes it: trailing whitespace dropped, line breaks escaped.
std::string OneLine(absl::string_view message);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_AGENT_LOG_H_
