#include "server/store/timing_repository.h"

#include <algorithm>

#include "server/store/change_log.h"
#include "server/store/timing_figures.h"

namespace wsched::store {
namespace {

// What the database's to_timestamp() takes.
double UnixSeconds(absl::Time t) { return absl::ToDoubleSeconds(t - absl::UnixEpoch()); }

const char* KindName(TimingKind kind) {
  switch (kind) {
    case TimingKind::kNodeStart:
      return "node_start";
    case TimingKind::kDriverInstall:
      return "driver_install";
    case TimingKind::kCloudStart:
      return "cloud_start";
    case TimingKind::kNodeBoot:
      return "node_boot";
    case TimingKind::kFirstReady:
      return "first_ready";
  }
  return "node_start";
}

}  // namespace

void RecordTimingSample(pqxx::work& txn, TimingKind kind, const std::string& pool,
                        const std::string& kernel, absl::Duration took,
                        core::DriverCache cache) {
  if (took < absl::ZeroDuration()) return;
  txn.exec_params(
      "INSERT INTO timing_samples (kind, pool, kernel, seconds, cache) VALUES ($1, $2, $3, $4, $5)",
      KindName(kind), pool, kernel, absl::ToDoubleSeconds(took), core::DriverCacheName(cache));
}

TimingFigures LoadTimingFigures(pqxx::work& txn, int recent) {
  TimingFigures figures;
  // By pool and kernel, when an install on it was last measured.
  std::map<std::string, std::map<std::string, double>> install_measured;
  // Median and p90 over each group's newest `recent` samples: a pool that
  // got faster (a new image, a warm AMI) is learnt within that many starts.
  for (const auto& row : txn.exec_params(
           "SELECT kind, pool, kernel, cache, percentile_cont(0.5) WITHIN GROUP (ORDER BY "
           "seconds), "
           "count(*), percentile_cont(0.9) WITHIN GROUP (ORDER BY seconds), "
           "date_part('epoch', max(measured_at)) "
           "FROM (SELECT kind, pool, kernel, cache, seconds, measured_at, row_number() OVER "
           "(PARTITION BY kind, pool, kernel, cache ORDER BY measured_at DESC, id DESC) AS n "
           "FROM timing_samples) recent WHERE n <= $1 GROUP BY kind, pool, kernel, cache",
           recent)) {
    TimingFigure figure{absl::Seconds(row[4].as<double>()), row[5].as<int>(),
                        absl::Seconds(row[6].as<double>())};
    const std::string kind = row[0].c_str();
    if (kind == "node_start") {
      figures.node_start[row[1].c_str()] = figure;
    } else if (kind == "cloud_start") {
      figures.cloud_start[row[1].c_str()] = figure;
    } else if (kind == "node_boot") {
      figures.node_boot[row[1].c_str()] = figure;
    } else if (kind == "first_ready") {
      figures.first_ready[row[1].c_str()] = figure;
    } else {
      core::DriverCache cache = core::ParseDriverCache(row[3].c_str()).value_or(core::DriverCache::kUnknown);
      figures.driver_install_by_cache[{row[1].c_str(), row[2].c_str(), cache}] = figure;
      double& last = install_measured[row[1].c_str()][row[2].c_str()];
      last = std::max(last, row[7].as<double>());
    }
  }
  for (const auto& [pool, kernels] : install_measured) {
    std::vector<std::pair<double, std::string>> newest;
    for (const auto& [kernel, at] : kernels) newest.emplace_back(-at, kernel);
    std::sort(newest.begin(), newest.end());
    for (auto& [at, kernel] : newest) figures.install_kernels[pool].push_back(std::move(kernel));
  }
  figures.driver_install = FiguresForTheNextInstall(figures.driver_install_by_cache);
  return figures;
}

void RecordGivenEstimate(pqxx::work& txn, const std::string& id, absl::Time at,
                         absl::Duration p50, absl::Duration p90) {
  txn.exec_params(
      "UPDATE workspaces SET estimate_given_at = to_timestamp($2), estimate_p50_seconds = $3, "
      "estimate_p90_seconds = $4, estimate_took_seconds = NULL, estimate_checked_at = NULL "
      "WHERE id = $1",
      id, UnixSeconds(at), absl::ToDoubleSeconds(std::max(absl::ZeroDuration(), p50)),
      absl::ToDoubleSeconds(std::max(absl::ZeroDuration(), p90)));
}

std::vector<CheckedEstimate> CheckEstimates(pqxx::work& txn, const std::vector<std::string>& ids,
                                            absl::Time placed_at) {
  std::vector<CheckedEstimate> checked;
  if (ids.empty()) return checked;
  // Clock skew between replicas could make it negative: counted as zero.
  for (const auto& row : txn.exec_params(
           "UPDATE workspaces w SET estimate_checked_at = to_timestamp($2::double precision), "
           "estimate_took_seconds = GREATEST(0, $2::double precision - "
           "date_part('epoch', w.estimate_given_at)) "
           "FROM unnest($1::text[]) AS s(id) WHERE w.id = s.id AND w.estimate_given_at IS NOT NULL "
           "AND w.estimate_checked_at IS NULL "
           "RETURNING w.id, COALESCE(w.pool, ''), w.estimate_p90_seconds, w.estimate_took_seconds",
           TextArray(ids), UnixSeconds(placed_at))) {
    checked.push_back({row[0].c_str(), row[1].c_str(), absl::Seconds(row[2].as<double>()),
                       absl::Seconds(row[3].as<double>())});
  }
  return checked;
}

std::map<std::string, EstimateAccuracy> LoadEstimateAccuracy(pqxx::work& txn, absl::Time since,
                                                             absl::Duration grace) {
  std::map<std::string, EstimateAccuracy> by_pool;
  for (const auto& row : txn.exec_params(
           "SELECT COALESCE(pool, ''), count(*), count(*) FILTER (WHERE estimate_took_seconds <= "
           "estimate_p90_seconds + $2::double precision) FROM workspaces "
           "WHERE estimate_checked_at >= to_timestamp($1::double precision) GROUP BY 1",
           UnixSeconds(since), absl::ToDoubleSeconds(grace))) {
    by_pool[row[0].c_str()] = {row[1].as<int64_t>(), row[2].as<int64_t>()};
  }
  return by_pool;
}

}  // namespace wsched::store
