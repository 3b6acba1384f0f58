// The audit trail: every state-changing call of an admin or project owner
// leaves one record (store/audit.h) of who made it, with which credential,
// what it named and how it ended. Written from the handler wrapper
// (handler.h), so no service can forget it, after the call's own
// transaction: a refused or failed call is recorded too.
#ifndef WSCHED_SERVER_GRPC_AUDIT_H_
#define WSCHED_SERVER_GRPC_AUDIT_H_

#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "absl/status/status.h"
#include "server/grpc/principal.h"
#include "server/store/audit.h"
#include "server/store/database.h"

namespace wsched::grpc_api {

// The methods that change state ("/wsched.v1.InventoryService/DrainNode"),
// whoever may call them. Heartbeats are liveness, not changes: not listed.
const std::vector<std::string>& StateChangingMethods();

// Whether a call leaves a record: a state-changing method called by a
// principal with the admin or project-owner role.
bool Audited(const std::string& method, const Principal& who);

// The record of one call. Key fields are the request's identifying scalars
// (ids, names, versions, dry_run), top level and one message deep
// ("settings.project_id"); never free text or documents (a catalog's YAML).
store::AuditRecord AuditRecordOf(const Principal& who, const std::string& method,
                                 const google::protobuf::Message& request,
                                 const absl::Status& outcome);

// Appends the record in a transaction of its own. A failure is logged, not
// returned: the call's answer is already decided.
void WriteAudit(store::Database& db, const store::AuditRecord& record);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_AUDIT_H_
