#include "server/process/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace wsched::process {
namespace {

constexpr int kLowestPriority = 19;

// setpriority(PRIO_PROCESS, tid) acts on one thread on Linux, where the
// nice value is per thread (setpriority(2), NOTES).
id_t CurrentThreadId() { return static_cast<id_t>(syscall(SYS_gettid)); }

}  // namespace

absl::StatusOr<int> CurrentThreadNice() {
  errno = 0;  // -1 is a valid nice value: errno tells a failure apart.
  const int nice = getpriority(PRIO_PROCESS, CurrentThreadId());
  if (nice == -1 && errno != 0) {
    return absl::InternalError(absl::StrCat("getpriority: ", std::strerror(errno)));
  }
  return nice;
}

absl::Status LowerCurrentThreadPriority(int increment) {
  if (increment < 1 || increment > kLowestPriority) {
    return absl::InvalidArgumentError(
        absl::StrCat("thread priority: increment must be 1..19, got ", increment));
  }
  absl::StatusOr<int> now = CurrentThreadNice();
  if (!now.ok()) return now.status();
  const int target = std::min(*now + increment, kLowestPriority);
  if (setpriority(PRIO_PROCESS, CurrentThreadId(), target) != 0) {
    return absl::InternalError(absl::StrCat("setpriority(", target, "): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace wsched::process
