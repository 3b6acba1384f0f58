// Syntax rules shared by every input path (catalog files, gRPC, agent).
#ifndef WSCHED_SERVER_CORE_VALIDATION_H_
#define WSCHED_SERVER_CORE_VALIDATION_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace wsched::core {

// RFC 1123 label: 1..63 of [a-z0-9-], starting and ending alphanumeric.
bool IsDnsLabel(absl::string_view text);
// RFC 1123 subdomain: dot-separated labels, <= 253 chars.
bool IsDnsSubdomain(absl::string_view text);
// "dddd:bb:dd.f" in lower-case hex.
bool IsPciAddress(absl::string_view text);
// Printable ASCII without control characters, at most max_len bytes.
bool IsBoundedText(absl::string_view text, size_t max_len);

// Collects every error of one input with the path where it occurred, so a
// caller sees all mistakes at once ("classes[2].gpu.count: must be >= 0").
class ErrorList {
 public:
  void Add(absl::string_view path, absl::string_view message);
  bool empty() const { return errors_.empty(); }
  const std::vector<std::string>& errors() const { return errors_; }
  // All errors joined by "\n".
  std::string Joined() const;

 private:
  std::vector<std::string> errors_;
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_VALIDATION_H_
