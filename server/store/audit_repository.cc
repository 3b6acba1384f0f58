#include "server/store/audit_repository.h"

#include <nlohmann/json.hpp>

namespace wsched::store {
namespace {

// Microseconds since the epoch: how timestamps cross the wire both ways
// without time-zone or text-format questions.
int64_t ToMicros(absl::Time t) { return absl::ToUnixMicros(t); }

}  // namespace

void InsertAuditRecord(pqxx::work& txn, const core::AuditRecord& record) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& [key, value] : record.fields) fields[key] = value;
  txn.exec_params(
      "INSERT INTO audit_records (principal, credential, method, object, fields, code, message) "
      "VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)",
      record.principal, record.credential, record.method, record.object, fields.dump(),
      record.code, record.message);
}

std::vector<core::AuditRecord> ListAuditRecords(pqxx::work& txn, const AuditFilter& filter,
                                          int64_t before_id, int limit) {
  // An object filter ending in "/" is a type: starts_with, else equality.
  const bool by_type = !filter.object.empty() && filter.object.back() == '/';
  std::vector<core::AuditRecord> out;
  for (const auto& row : txn.exec_params(
           "SELECT id, (extract(epoch FROM at) * 1000000)::bigint, principal, credential, method, "
           "object, fields::text, code, message FROM audit_records "
           "WHERE ($1::bigint = 0 OR id < $1::bigint) AND ($2::text = '' OR principal = $2::text) "
           "AND ($3::text = '' OR (CASE WHEN $4::bool THEN starts_with(object, $3::text) "
           "ELSE object = $3::text END)) "
           "AND (NOT $5::bool OR at >= to_timestamp($6::bigint / 1000000.0)) "
           "AND (NOT $7::bool OR at < to_timestamp($8::bigint / 1000000.0)) "
           "ORDER BY id DESC LIMIT $9",
           before_id, filter.principal, filter.object, by_type, filter.since.has_value(),
           filter.since ? ToMicros(*filter.since) : int64_t{0}, filter.before.has_value(),
           filter.before ? ToMicros(*filter.before) : int64_t{0}, limit)) {
    core::AuditRecord record;
    record.id = row[0].as<int64_t>();
    record.at = absl::FromUnixMicros(row[1].as<int64_t>());
    record.principal = row[2].c_str();
    record.credential = row[3].c_str();
    record.method = row[4].c_str();
    record.object = row[5].c_str();
    const nlohmann::json fields = nlohmann::json::parse(row[6].c_str());
    for (const auto& [key, value] : fields.items()) {
      record.fields[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
    record.code = row[7].c_str();
    record.message = row[8].c_str();
    out.push_back(std::move(record));
  }
  return out;
}

int64_t DeleteOldAuditRecords(pqxx::work& txn, absl::Duration retention, int limit) {
  // Oldest first along audit_records_at: a batch reads only what it deletes.
  return txn
      .exec_params(
          "WITH old AS (SELECT id FROM audit_records "
          "WHERE at < now() - make_interval(secs => $1::float8) ORDER BY at LIMIT $2 "
          "FOR UPDATE SKIP LOCKED) "
          "DELETE FROM audit_records a USING old WHERE a.id = old.id",
          absl::ToDoubleSeconds(retention), limit)
      .affected_rows();
}

}  // namespace wsched::store
