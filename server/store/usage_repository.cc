#include "server/store/usage_repository.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/store/change_log.h"

namespace wsched::store {
namespace {

// Timestamps cross the wire as text in UTC with six fraction digits, so
// none loses a microsecond to a float.
std::string TimestampText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", t, absl::UTCTimeZone());
}

// An SQL expression of `column` (timestamptz) as microseconds since the
// epoch, exactly (extract returns numeric).
std::string Micros(absl::string_view column) {
  return absl::StrCat("(extract(epoch FROM ", column, ") * 1000000)::bigint");
}

absl::Time FromMicros(const pqxx::field& field) { return absl::FromUnixMicros(field.as<int64_t>()); }

// The figures of `us` microseconds (an SQL expression) of one row of `u`:
// products in numeric, so nothing overflows, scaled to seconds with six
// fraction digits, exactly. GPU-seconds count a MIG slice by its share,
// in sevenths (migrations/0019), rounded to the microsecond: a whole GPU's
// figures come out exactly as before.
std::string FigureColumns(absl::string_view us, bool summed) {
  auto figure = [&](absl::string_view amount) {
    return summed ? absl::StrCat("(sum(", amount, "::numeric * ", us, ") * 0.000001)::text")
                  : absl::StrCat("(", amount, "::numeric * ", us, " * 0.000001)::text");
  };
  const std::string gpu_sevenths_us =
      absl::StrCat("(gpu_count * 7 + mig_compute_slices)::numeric * ", us);
  const std::string gpu = summed
                              ? absl::StrCat("round(sum(", gpu_sevenths_us, ") / 7000000, 6)::text")
                              : absl::StrCat("round(", gpu_sevenths_us, " / 7000000, 6)::text");
  return absl::StrCat(summed ? absl::StrCat("sum(", us, ")::bigint") : std::string(us), ", ", gpu,
                      ", ", figure("cpu_millis"), ", ", figure("memory_bytes"));
}

// The range, the filters and the reader's scope, over usage_intervals `u`:
// $1..$8 as FilterArgs passes them. `p` has s (start), e (end), now.
constexpr char kRange[] =
    "WITH p AS (SELECT COALESCE($1::timestamptz, '-infinity') AS s, "
    "COALESCE($2::timestamptz, now()) AS e, now() AS now) ";
constexpr char kFilters[] =
    "u.started_at < p.e AND (COALESCE(u.ended_at, p.now) > p.s OR u.started_at >= p.s) "
    "AND ($3::text = '' OR u.org_id = $3::text) AND ($4::text = '' OR u.project_id = $4::text) "
    "AND ($5::text = '' OR u.class_id = $5::text) "
    "AND ($6::bool OR CASE WHEN cardinality($7::text[]) > 0 THEN u.project_id = ANY($7::text[]) "
    "ELSE u.org_id = ANY($8::text[]) END)";

// An unset time as SQL NULL: libpqxx 6 passes a null char pointer as NULL.
class NullableTimestamp {
 public:
  explicit NullableTimestamp(const std::optional<absl::Time>& t) {
    if (t) text_ = TimestampText(*t);
  }
  const char* get() const { return text_ ? text_->c_str() : nullptr; }

 private:
  std::optional<std::string> text_;
};

std::vector<std::string> JsonStrings(const char* json) {
  std::vector<std::string> out;
  for (const auto& value : nlohmann::json::parse(json)) {
    out.push_back(value.is_string() ? value.get<std::string>() : std::string());
  }
  return out;
}

core::UsageFigures FiguresOf(const pqxx::row& row, int first) {
  return {row[first].as<int64_t>(), row[first + 1].c_str(), row[first + 2].c_str(),
          row[first + 3].c_str()};
}

}  // namespace

std::string UsageInsertSql(absl::string_view reason_sql, absl::string_view from_where) {
  return absl::StrCat(
      "INSERT INTO usage_records (started_at, workspace_id, ended_at, end_reason, org_id, "
      "project_id, user_id, class_id, pool, node_name, gpu_count, gpu_models, cpu_millis, "
      "memory_bytes, mig_profile, mig_compute_slices) SELECT w.placed_at, w.id, "
      "GREATEST(now(), w.placed_at), ",
      reason_sql,
      ", w.org_id, w.project_id, w.user_id, w.class_id, COALESCE(w.pool, ''), "
      "COALESCE(w.node_name, ''), w.gpu_count, "
      "COALESCE(jsonb_path_query_array(w.placement, '$.gpus[*].model'), '[]'), w.cpu_millis, "
      "w.memory_bytes, COALESCE(w.placement->'slice'->>'profile', ''), "
      "COALESCE((w.placement->'slice'->>'compute_slices')::smallint, 0) FROM workspaces w ",
      from_where, " AND w.state = 'placed' AND w.placed_at IS NOT NULL ON CONFLICT DO NOTHING");
}

absl::StatusOr<std::vector<core::UsageRecord>> ListUsageRecords(pqxx::work& txn, const UsageFilter& filter,
                                                         const std::optional<UsageCursor>& after,
                                                         int limit) {
  static const std::string* sql = new std::string(absl::StrCat(
      kRange,
      "SELECT u.workspace_id, u.org_id, u.project_id, u.user_id, u.class_id, u.pool, u.node_name, "
      "u.gpu_count, u.gpu_models::text, u.cpu_millis, u.memory_bytes, u.mig_profile, "
      "u.mig_compute_slices, ",
      Micros("u.started_at"), ", COALESCE(", Micros("u.ended_at"), ", 0), u.ended_at IS NULL, ",
      "COALESCE(u.end_reason, ''), ", Micros("c.a"), ", ", Micros("c.b"), ", ",
      FigureColumns("d.us", /*summed=*/false),
      " FROM usage_intervals u CROSS JOIN p "
      "CROSS JOIN LATERAL (SELECT greatest(u.started_at, p.s) AS a, "
      "least(COALESCE(u.ended_at, p.now), p.e) AS b) c "
      "CROSS JOIN LATERAL (SELECT ((extract(epoch FROM c.b) - extract(epoch FROM c.a)) * 1000000)"
      "::bigint AS us) d WHERE ",
      kFilters,
      " AND ($9::timestamptz IS NULL OR (u.started_at, u.workspace_id) > ($9::timestamptz, "
      "$10::text)) "
      "ORDER BY u.started_at, u.workspace_id LIMIT $11"));
  const NullableTimestamp start(filter.start), end(filter.end);
  const NullableTimestamp after_started(after ? std::optional(after->started_at) : std::nullopt);
  std::vector<core::UsageRecord> out;
  for (const auto& row : txn.exec_params(
           *sql, start.get(), end.get(), filter.org_id, filter.project_id, filter.class_id,
           filter.scope.everything, TextArray(filter.scope.projects), TextArray(filter.scope.orgs),
           after_started.get(), after ? after->workspace_id : std::string(), limit)) {
    core::UsageRecord r;
    r.workspace_id = row[0].c_str();
    r.org_id = row[1].c_str();
    r.project_id = row[2].c_str();
    r.user_id = row[3].c_str();
    r.class_id = row[4].c_str();
    r.pool = row[5].c_str();
    r.node_name = row[6].c_str();
    r.gpu_count = row[7].as<int>();
    r.gpu_models = JsonStrings(row[8].c_str());
    r.cpu_millis = row[9].as<int64_t>();
    r.memory_bytes = row[10].as<int64_t>();
    r.mig_profile = row[11].c_str();
    r.mig_compute_slices = row[12].as<int>();
    r.started_at = FromMicros(row[13]);
    if (!row[15].as<bool>()) {
      r.ended_at = FromMicros(row[14]);
      r.end_reason = core::ParseEndReason(row[16].c_str());
      if (!r.end_reason) {
        return absl::DataLossError(absl::StrCat("usage record of workspace ", r.workspace_id,
                                                " has an unknown end_reason"));
      }
    }
    r.counted_from = FromMicros(row[17]);
    r.counted_until = FromMicros(row[18]);
    r.figures = FiguresOf(row, 19);
    out.push_back(std::move(r));
  }
  return out;
}

bool KnownTimeZone(pqxx::work& txn, const std::string& name) {
  return txn.exec_params1("SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1)", name)[0]
      .as<bool>();
}

namespace {

// The calendar buckets (bs, be) over p.s .. p.e in time zone $9. Hours
// step in absolute time from the zone's hour at the start (a local hour
// sequence would fold the repeated hour of a DST end into one); days and
// months step through the zone's local calendar and are converted back,
// so a DST day is 23 or 25 hours long.
std::string BucketsSql(core::UsageBucket bucket) {
  switch (bucket) {
    // ($9 named so that it has a type.)
    case core::UsageBucket::kNone: return "SELECT p.s AS bs, p.e AS be FROM p WHERE $9::text <> ''";
    case core::UsageBucket::kHour:
      return "SELECT g AS bs, g + interval '1 hour' AS be FROM p, generate_series("
             "date_trunc('hour', p.s, $9::text), p.e - interval '1 microsecond', "
             "interval '1 hour') g";
    case core::UsageBucket::kDay:
    case core::UsageBucket::kMonth: {
      const char* unit = bucket == core::UsageBucket::kDay ? "day" : "month";
      return absl::StrCat(
          "SELECT g AT TIME ZONE $9::text AS bs, (g + interval '1 ", unit,
          "') AT TIME ZONE $9::text AS be FROM p, generate_series(date_trunc('", unit,
          "', p.s AT TIME ZONE $9::text), (p.e - interval '1 microsecond') AT TIME ZONE $9::text, "
          "interval '1 ", unit, "') g");
    }
  }
  return "";
}

bool Groups(const UsageSummaryRequest& request, core::UsageGroup group) {
  for (core::UsageGroup g : request.group_by) {
    if (g == group) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<core::UsageSummaryRow>> SummarizeUsage(pqxx::work& txn,
                                                           const UsageSummaryRequest& request) {
  auto group_column = [&](core::UsageGroup group, const char* column) {
    return Groups(request, group) ? absl::StrCat("x.", column) : std::string("''::text");
  };
  const std::string sql = absl::StrCat(
      kRange,
      ", iv AS (SELECT u.workspace_id, u.org_id, u.project_id, u.class_id, u.gpu_count, "
      "u.mig_compute_slices, "
      "u.cpu_millis, u.memory_bytes, greatest(u.started_at, p.s) AS a, "
      "least(COALESCE(u.ended_at, p.now), p.e) AS b FROM usage_intervals u CROSS JOIN p WHERE ",
      kFilters, "), buckets AS (", BucketsSql(request.bucket),
      "), x AS (SELECT k.bs, k.be, iv.*, ((extract(epoch FROM least(iv.b, k.be)) - "
      "extract(epoch FROM greatest(iv.a, k.bs))) * 1000000)::bigint AS us "
      "FROM iv JOIN buckets k ON iv.a < k.be AND (iv.b > k.bs OR (iv.a = iv.b AND iv.a >= k.bs))) "
      "SELECT ",
      Micros("x.bs"), ", ", Micros("x.be"), ", ", group_column(core::UsageGroup::kOrg, "org_id"),
      ", ", group_column(core::UsageGroup::kProject, "project_id"), ", ",
      group_column(core::UsageGroup::kClass, "class_id"), ", ",
      FigureColumns("x.us", /*summed=*/true),
      ", count(DISTINCT x.workspace_id) FROM x GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 3, 4, 5 "
      "LIMIT $10");
  std::vector<core::UsageSummaryRow> out;
  const UsageFilter& f = request.filter;
  const NullableTimestamp start(f.start), end(f.end);
  for (const auto& row : txn.exec_params(
           sql, start.get(), end.get(), f.org_id, f.project_id,
           f.class_id, f.scope.everything, TextArray(f.scope.projects), TextArray(f.scope.orgs),
           request.time_zone, request.max_rows + 1)) {
    core::UsageSummaryRow r;
    r.bucket_start = FromMicros(row[0]);
    r.bucket_end = FromMicros(row[1]);
    r.org_id = row[2].c_str();
    r.project_id = row[3].c_str();
    r.class_id = row[4].c_str();
    r.figures = FiguresOf(row, 5);
    r.workspaces = row[9].as<int64_t>();
    out.push_back(std::move(r));
  }
  return out;
}

SpendingReading ReadSpending(pqxx::work& txn, const std::string& kind, const std::string& id,
                             absl::Time period_start) {
  // GPU-microseconds of u from `since` to its end (now() while it runs),
  // rounded per placement as the ledger rounds a slice's share.
#define WSCHED_GPU_MICROS_SINCE(since)                                                     \
  "round((u.gpu_count * 7 + u.mig_compute_slices)::numeric * GREATEST(extract(epoch FROM " \
  "COALESCE(u.ended_at, now()) - GREATEST(u.started_at, " since ")), 0) * 1000000 / 7)"
  pqxx::result rows = txn.exec_params(
      "WITH p AS (SELECT timestamptz 'epoch' + $2::bigint * interval '1 microsecond' AS start, "
      "now() - interval '1 hour' AS hour_ago) "
      "SELECT COALESCE(sum(" WSCHED_GPU_MICROS_SINCE("p.start") "), 0)::bigint, "
      "COALESCE(sum(" WSCHED_GPU_MICROS_SINCE("p.hour_ago") "), 0)::bigint, "
      "COALESCE(sum(u.gpu_count * 7 + u.mig_compute_slices) FILTER (WHERE u.ended_at IS NULL), "
      "0)::bigint FROM usage_intervals u, p "
      "WHERE (CASE $1 WHEN 'org' THEN u.org_id ELSE u.project_id END) = $3 "
      "AND (u.ended_at IS NULL OR u.ended_at > LEAST(p.start, p.hour_ago))",
      kind, absl::ToUnixMicros(period_start), id);
#undef WSCHED_GPU_MICROS_SINCE
  return {rows[0][0].as<int64_t>(), rows[0][1].as<int64_t>(), rows[0][2].as<int64_t>()};
}

absl::Time DatabaseNow(pqxx::work& txn) {
  return absl::FromUnixMicros(
      txn.exec("SELECT (extract(epoch FROM now()) * 1000000)::bigint")[0][0].as<int64_t>());
}

int64_t DeleteOldUsageRecords(pqxx::work& txn, absl::Duration retention, int limit) {
  // Oldest ended first along usage_records_ended: a batch reads only what
  // it deletes.
  return txn
      .exec_params(
          "WITH old AS (SELECT started_at, workspace_id FROM usage_records "
          "WHERE ended_at < now() - make_interval(secs => $1::float8) ORDER BY ended_at LIMIT $2 "
          "FOR UPDATE SKIP LOCKED) "
          "DELETE FROM usage_records r USING old "
          "WHERE r.started_at = old.started_at AND r.workspace_id = old.workspace_id",
          absl::ToDoubleSeconds(retention), limit)
      .affected_rows();
}

}  // namespace wsched::store
