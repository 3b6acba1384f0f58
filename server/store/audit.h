// Audit records (migration 0009): what AuditRepository (unit_of_work.h)
// writes and lists. Free of libpqxx like every public store header.
#ifndef WSCHED_SERVER_STORE_AUDIT_H_
#define WSCHED_SERVER_STORE_AUDIT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace wsched::store {

struct AuditRecord {
  int64_t id = 0;       // Set by the store; increases with every record.
  absl::Time at;        // Set by the store (the database's clock).
  std::string principal;
  std::string credential;  // Which token or certificate identity.
  std::string method;      // "/wsched.v1.InventoryService/DrainNode".
  std::string object;      // "node/n-1"; "" when the request named none.
  std::map<std::string, std::string> fields;
  std::string code;  // gRPC code name of the outcome: "OK", "PERMISSION_DENIED".
  std::string message;
};

// Empty / unset members match everything.
struct AuditFilter {
  std::string principal;
  // Exact ("node/n-1"), or every object of a type when it ends in "/" ("node/").
  std::string object;
  std::optional<absl::Time> since;   // at >= since.
  std::optional<absl::Time> before;  // at < before.
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_AUDIT_H_
