// Background loops that walk the whole fleet (the scaling leader's tick)
// run at a lower CPU priority than the threads that answer calls, so that
// on a busy machine their milliseconds of work spread out instead of
// taking a core from placements in one piece (docs/architecture.md,
// "Background work yields to the hot path").
#ifndef WSCHED_SERVER_PROCESS_THREAD_PRIORITY_H_
#define WSCHED_SERVER_PROCESS_THREAD_PRIORITY_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace wsched::process {

// The calling thread's nice value (Linux keeps one per thread).
absl::StatusOr<int> CurrentThreadNice();

// Raises the calling thread's nice value by `increment` (1..19), up to 19,
// the lowest priority: no privilege is needed to lower one's own priority,
// and only this thread is affected. On a machine with idle CPUs the thread
// runs as fast as before; it yields only when others want the CPU.
absl::Status LowerCurrentThreadPriority(int increment);

}  // namespace wsched::process

#endif  // WSCHED_SERVER_PROCESS_THREAD_PRIORITY_H_
