// Field checks shared by request validation: each failure names the field
// and the rule, and every check runs before any write.
#ifndef WSCHED_SERVER_GRPC_REQUEST_CHECKS_H_
#define WSCHED_SERVER_GRPC_REQUEST_CHECKS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/repeated_field.h"
#include "server/core/error_reason.h"
#include "server/core/validation.h"

namespace wsched::grpc_api {

inline constexpr size_t kMaxIdBytes = 128;
inline constexpr int kMaxListEntries = 100;

// An opaque id from the control plane (org, project, user, workspace):
// 1..128 printable characters.
inline absl::Status CheckId(const std::string& value, const char* field) {
  if (value.empty()) return core::InvalidFieldError(field, "is required");
  if (!core::IsBoundedText(value, kMaxIdBytes) || value.find(' ') != std::string::npos) {
    return core::InvalidFieldError(
        field, absl::StrCat("must be 1..", kMaxIdBytes, " printable characters without spaces"));
  }
  return absl::OkStatus();
}

// A class id reference: a DNS label.
inline absl::Status CheckClassId(const std::string& value, const char* field) {
  if (!core::IsDnsLabel(value)) {
    return core::InvalidFieldError(
        field, absl::StrCat("\"", value.substr(0, 70), "\" is not a class id (a DNS label: a-z, 0-9, '-')"));
  }
  return absl::OkStatus();
}

inline absl::Status CheckClassIdList(const google::protobuf::RepeatedPtrField<std::string>& list,
                                     const char* field) {
  if (list.size() > kMaxListEntries) {
    return core::InvalidFieldError(field, absl::StrCat("at most ", kMaxListEntries, " entries"));
  }
  for (int i = 0; i < list.size(); ++i) {
    if (absl::Status s = CheckClassId(list[i], absl::StrCat(field, "[", i, "]").c_str()); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_REQUEST_CHECKS_H_
