#include "server/convert/audit_convert.h"

#include <google/protobuf/util/time_util.h>

namespace wsched::convert {

v1::AuditRecord ToProto(const core::AuditRecord& record) {
  v1::AuditRecord out;
  out.set_id(record.id);
  *out.mutable_time() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(record.at));
  out.set_principal(record.principal);
  out.set_credential(record.credential);
  out.set_method(record.method);
  out.set_object(record.object);
  for (const auto& [key, value] : record.fields) (*out.mutable_fields())[key] = value;
  out.set_code(record.code);
  out.set_message(record.message);
  return out;
}

}  // namespace wsched::convert
