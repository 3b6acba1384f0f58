// The time a part of wsched decides by. A part that reads the time takes a
// Clock, so its tests can set it; WallClock() is the one reading of the
// wall clock in the server (ctest clock_injected refuses absl::Now()
// elsewhere), handed to the parts by whoever builds them. The pure code never
// calls it: it is given times.
//
// A wait on a lock or condition is bounded by a timeout (absl::Duration),
// not by a deadline read from a Clock: a fake clock must not make a real
// thread sleep for a year or not at all.
#ifndef WSCHED_SERVER_CORE_CLOCK_H_
#define WSCHED_SERVER_CORE_CLOCK_H_

#include <functional>

#include "absl/time/time.h"

namespace wsched::core {

using Clock = std::function<absl::Time()>;

// absl::Now().
Clock WallClock();

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_CLOCK_H_
