#include "server/agent/agent_log.h"

#include <cstdio>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wsched::agent {

std::string OneLine(absl::string_view message) {
  // What another program printed (nvidia-smi, an installer) may hold line
  // breaks; one record must stay one line for journald and log shippers.
  std::string line = absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(message),
                                         {{"\r\n", "\\n"}, {"\n", "\\n"}, {"\r", "\\r"}});
  return line;
}

void Log(absl::string_view message) {
  std::string line = absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
      " wsched-agent: ", OneLine(message), "\n");
  // One write per line keeps lines whole when threads log at once.
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace wsched::agent
