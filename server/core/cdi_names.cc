#include "server/core/cdi_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace wsched::core {
namespace {

constexpr size_t kMaxAnnotationName = 63;
constexpr size_t kMaxQualifiedName = 256;

// Letters/digits at both ends, `inner` characters allowed in between.
bool AlnumEndsWith(absl::string_view text, absl::string_view inner, bool letter_first) {
  if (text.empty()) return false;
  if (letter_first ? !absl::ascii_isalpha(text.front()) : !absl::ascii_isalnum(text.front())) {
    return false;
  }
  if (!absl::ascii_isalnum(text.back())) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(c) && inner.find(c) == absl::string_view::npos) return false;
  }
  return true;
}

}  // namespace

bool IsCdiKind(absl::string_view kind) {
  size_t slash = kind.find('/');
  if (slash == absl::string_view::npos) return false;
  return AlnumEndsWith(kind.substr(0, slash), "-_.", /*letter_first=*/true) &&
         AlnumEndsWith(kind.substr(slash + 1), "-_", /*letter_first=*/true);
}

bool IsCdiDeviceName(absl::string_view name) {
  return name.size() <= kMaxQualifiedName && AlnumEndsWith(name, "-_.:", /*letter_first=*/false);
}

bool IsCdiQualifiedName(absl::string_view qualified) {
  if (qualified.size() > kMaxQualifiedName) return false;
  size_t eq = qualified.find('=');
  if (eq == absl::string_view::npos) return false;
  return IsCdiKind(qualified.substr(0, eq)) && IsCdiDeviceName(qualified.substr(eq + 1));
}

std::string CdiQualifiedName(absl::string_view kind, absl::string_view name) {
  return absl::StrCat(kind, "=", name);
}

absl::StatusOr<std::string> CdiAnnotationKey(absl::string_view plugin, absl::string_view device_id) {
  if (plugin.empty()) return absl::InvalidArgumentError("CDI annotation: plugin name is empty");
  if (device_id.empty()) return absl::InvalidArgumentError("CDI annotation: device id is empty");
  std::string name = absl::StrCat(plugin, "_", absl::StrReplaceAll(device_id, {{"/", "_"}}));
  if (name.size() > kMaxAnnotationName) {
    return absl::InvalidArgumentError(absl::StrCat("CDI annotation name \"", name, "\" is ",
                                                   name.size(), " characters; at most ",
                                                   kMaxAnnotationName));
  }
  if (!AlnumEndsWith(name, "-_.", /*letter_first=*/false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CDI annotation name \"", name,
        "\" must start and end with a letter or digit and hold only letters, digits, '-', '_', '.'"));
  }
  return absl::StrCat(kCdiAnnotationPrefix, name);
}

absl::StatusOr<std::string> CdiAnnotationValue(const std::vector<std::string>& qualified_names) {
  if (qualified_names.empty()) return absl::InvalidArgumentError("CDI annotation: no devices");
  for (const std::string& name : qualified_names) {
    if (!IsCdiQualifiedName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", name, "\" is not a qualified CDI device name (vendor/class=name)"));
    }
  }
  return absl::StrJoin(qualified_names, ",");
}

}  // namespace wsched::core
