// The audit trail's rules, as plain operations over the store: appending
// the record of one call, and listing the trail page by page. Which calls
// leave a record and what it holds is the transport's (grpc/audit_trail.h): it
// reads the request message. Who may list is the method table's.
#ifndef WSCHED_SERVER_APP_AUDIT_OPERATIONS_H_
#define WSCHED_SERVER_APP_AUDIT_OPERATIONS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/audit.h"
#include "server/core/paging.h"
#include "server/store/database.h"

namespace wsched::app {

// Empty / unset members match everything.
struct AuditQuery {
  std::string principal;
  // Exact ("node/n-1"), or every object of a type when it ends in "/" ("node/").
  std::string object;
  std::optional<absl::Time> since;   // at >= since.
  std::optional<absl::Time> before;  // at < before.
};

// INVALID_ARGUMENT naming end_time when the range ends before it starts.
absl::Status CheckAuditQuery(const AuditQuery& query);

// The query as a page token records it.
std::string AuditListingFilter(const AuditQuery& query);

class AuditOperations {
 public:
  explicit AuditOperations(store::Database* db) : db_(db) {}

  // Appends `record` in a transaction of its own. A failure is logged, not
  // returned: the call it records is answered already.
  void Record(const core::AuditRecord& record);

  // Newest first; a token continues only the query it was issued for
  // (INVALID_ARGUMENT naming page_token otherwise).
  absl::StatusOr<core::Page<core::AuditRecord>> List(const AuditQuery& query, int page_size,
                                                     const std::string& page_token) const;

 private:
  store::Database* const db_;
};

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_AUDIT_OPERATIONS_H_
