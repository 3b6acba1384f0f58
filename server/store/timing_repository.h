// Measured durations for the time-to-GPU estimate (migration 0005).
#ifndef WSCHED_SERVER_STORE_TIMING_REPOSITORY_H_
#define WSCHED_SERVER_STORE_TIMING_REPOSITORY_H_

#include <map>
#include <string>
#include <utility>

#include <pqxx/pqxx>

#include "absl/time/time.h"
#include "server/store/types.h"

namespace wsched::store {

// Appends one sample; negative durations (clock skew) are dropped. `cache`
// only for driver installs whose installer said.
void RecordTimingSample(pqxx::work& txn, TimingKind kind, const std::string& pool,
                        const std::string& kernel, absl::Duration took,
                        core::DriverCache cache = core::DriverCache::kUnknown);

// The median of the most recent `recent` samples of each pool (and kernel),
// with how many it used.
TimingFigures LoadTimingFigures(pqxx::work& txn, int recent = 20);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_TIMING_REPOSITORY_H_
