#include "server/store/timing_repository.h"

#include "server/store/timing_figures.h"

namespace wsched::store {
namespace {

const char* KindName(TimingKind kind) {
  return kind == TimingKind::kNodeStart ? "node_start" : "driver_install";
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
  // Median over each group's newest `recent` samples: a pool that got
  // faster (a new image, a warm AMI) is learnt within that many starts.
  for (const auto& row : txn.exec_params(
           "SELECT kind, pool, kernel, cache, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds), "
           "count(*) FROM (SELECT kind, pool, kernel, cache, seconds, row_number() OVER "
           "(PARTITION BY kind, pool, kernel, cache ORDER BY measured_at DESC, id DESC) AS n "
           "FROM timing_samples) recent WHERE n <= $1 GROUP BY kind, pool, kernel, cache",
           recent)) {
    TimingFigure figure{absl::Seconds(row[4].as<double>()), row[5].as<int>()};
    const std::string kind = row[0].c_str();
    if (kind == "node_start") {
      figures.node_start[row[1].c_str()] = figure;
    } else {
      core::DriverCache cache = core::ParseDriverCache(row[3].c_str()).value_or(core::DriverCache::kUnknown);
      figures.driver_install_by_cache[{row[1].c_str(), row[2].c_str(), cache}] = figure;
    }
  }
  figures.driver_install = FiguresForTheNextInstall(figures.driver_install_by_cache);
  return figures;
}

}  // namespace wsched::store
