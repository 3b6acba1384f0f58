// Audit records (migration 0009): what AuditRepository (unit_of_work.h)
// writes and lists, and by what. The records are core's (core/audit.h).
// Free of libpqxx like every public store header.
#ifndef WSCHED_SERVER_STORE_AUDIT_QUERY_H_
#define WSCHED_SERVER_STORE_AUDIT_QUERY_H_

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "server/core/audit.h"

namespace wsched::store {

// Empty / unset members match everything.
struct AuditFilter {
  std::string principal;
  // Exact ("node/n-1"), or every object of a type when it ends in "/" ("node/").
  std::string object;
  std::optional<absl::Time> since;   // at >= since.
  std::optional<absl::Time> before;  // at < before.
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_AUDIT_QUERY_H_
