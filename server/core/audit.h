// One entry of the audit trail: who changed what, with which credential,
// and how the call ended (docs/security.md, "Audit trail"). The store keeps these
// (store/audit_query.h lists them by its filter); app/audit_operations.h writes
// and pages them; the transport fills one per state-changing call.
#ifndef WSCHED_SERVER_CORE_AUDIT_H_
#define WSCHED_SERVER_CORE_AUDIT_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"

namespace wsched::core {

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

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_AUDIT_H_
