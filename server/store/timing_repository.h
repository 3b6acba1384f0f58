// Measured durations for the time-to-GPU estimate (migration 0005).
#ifndef WSCHED_SERVER_STORE_TIMING_REPOSITORY_H_
#define WSCHED_SERVER_STORE_TIMING_REPOSITORY_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/time/time.h"
#include "server/store/types.h"

namespace wsched::store {

// Appends one sample; negative durations (clock skew) are dropped. `cache`
// only for driver installs whose installer said.
void RecordTimingSample(pqxx::work& txn, TimingKind kind, const std::string& pool,
                        const std::string& kernel, absl::Duration took,
                        core::DriverCache cache = core::DriverCache::kUnknown);

// The median and 90th percentile of the most recent `recent` samples of
// each pool (and kernel), with how many they used.
TimingFigures LoadTimingFigures(pqxx::work& txn, int recent = 20);

// The estimate workspace `id` was given when queued at `at`, by the
// server's clock. A workspace is queued once per Place call that queues it,
// so this replaces the estimate of an earlier time it was queued.
void RecordGivenEstimate(pqxx::work& txn, const std::string& id, absl::Time at,
                         absl::Duration p50, absl::Duration p90);

// For each of `ids`, just placed by the queue at `placed_at`, whose given
// estimate is not checked yet: stores how long it took (given -> placed)
// and returns it with the pool and p90. A workspace placed before its
// estimate was stored has none and is not checked.
std::vector<CheckedEstimate> CheckEstimates(pqxx::work& txn, const std::vector<std::string>& ids,
                                            absl::Time placed_at);

// By pool, the placements checked at or after `since`; within their p90
// when they took no longer than it plus `grace` (placement::WithinEstimate).
std::map<std::string, EstimateAccuracy> LoadEstimateAccuracy(pqxx::work& txn, absl::Time since,
                                                             absl::Duration grace);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_TIMING_REPOSITORY_H_
