#include "server/store/timing_repository.h"

namespace wsched::store {
namespace {

const char* KindName(TimingKind kind) {
  return kind == TimingKind::kNodeStart ? "node_start" : "driver_install";
}

}  // namespace

void RecordTimingSample(pqxx::work& txn, TimingKind kind, const std::string& pool,
                        const std::string& kernel, absl::Duration took) {
  if (took < absl::ZeroDuration()) return;
  txn.exec_params("INSERT INTO timing_samples (kind, pool, kernel, seconds) VALUES ($1, $2, $3, $4)",
                  KindName(kind), pool, kernel, absl::ToDoubleSeconds(took));
}

TimingFigures LoadTimingFigures(pqxx::work& txn, int recent) {
  TimingFigures figures;
  // Median over each group's newest `recent` samples: a pool that got
  // faster (a new image, a warm AMI) is learnt within that many starts.
  for (const auto& row : txn.exec_params(
           "SELECT kind, pool, kernel, percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds), "
           "count(*) FROM (SELECT kind, pool, kernel, seconds, row_number() OVER "
           "(PARTITION BY kind, pool, kernel ORDER BY measured_at DESC, id DESC) AS n "
           "FROM timing_samples) recent WHERE n <= $1 GROUP BY kind, pool, kernel",
           recent)) {
    TimingFigure figure{absl::Seconds(row[3].as<double>()), row[4].as<int>()};
    const std::string kind = row[0].c_str();
    if (kind == "node_start") {
      figures.node_start[row[1].c_str()] = figure;
    } else {
      figures.driver_install[{row[1].c_str(), row[2].c_str()}] = figure;
    }
  }
  return figures;
}

}  // namespace wsched::store
