// The audit trail's core type (core/audit.h) -> wsched.v1.AuditRecord.
#ifndef WSCHED_SERVER_CONVERT_AUDIT_CONVERT_H_
#define WSCHED_SERVER_CONVERT_AUDIT_CONVERT_H_

#include "server/core/audit.h"
#include "wsched/v1/audit.pb.h"

namespace wsched::convert {

v1::AuditRecord ToProto(const core::AuditRecord& record);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_AUDIT_CONVERT_H_
