// The audit trail's SQL (migration 0009).
#ifndef WSCHED_SERVER_STORE_AUDIT_REPOSITORY_H_
#define WSCHED_SERVER_STORE_AUDIT_REPOSITORY_H_

#include <cstdint>
#include <vector>

#include <pqxx/pqxx>

#include "absl/time/time.h"
#include "server/store/audit_query.h"

namespace wsched::store {

void InsertAuditRecord(pqxx::work& txn, const core::AuditRecord& record);

// Newest first: records with id < before_id (0: from the newest), at most
// `limit`.
std::vector<core::AuditRecord> ListAuditRecords(pqxx::work& txn, const AuditFilter& filter,
                                          int64_t before_id, int limit);

// Deletes up to `limit` of the oldest records older than `retention`;
// returns how many.
int64_t DeleteOldAuditRecords(pqxx::work& txn, absl::Duration retention, int limit);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_AUDIT_REPOSITORY_H_
