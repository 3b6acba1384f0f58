// The audit trail: every state-changing call of an admin or project owner
// leaves one record (core/audit.h) of who made it, with which credential,
// what it named and how it ended. Written from the handler wrapper
// (handler.h), so no service can forget it, after the call's own
// transaction: a refused or failed call is recorded too. What a record
// holds is read here, from the request message; the application appends
// it (app/audit_operations.h).
#ifndef WSCHED_SERVER_GRPC_AUDIT_TRAIL_H_
#define WSCHED_SERVER_GRPC_AUDIT_TRAIL_H_

#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "absl/status/status.h"
#include "server/core/audit.h"
#include "server/grpc/principal.h"

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
core::AuditRecord AuditRecordOf(const Principal& who, const std::string& method,
                                const google::protobuf::Message& request,
                                const absl::Status& outcome);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_AUDIT_TRAIL_H_
