// Path-aware, non-throwing reading of YAML values.
//
// yaml-cpp throws on every failed conversion; a catalog with ten mistakes
// must report ten errors, not crash on the first. These helpers look at node
// types and scalar text themselves, report what is wrong at the value's path,
// and hand back nullopt so the caller carries on with the next field.
#ifndef WSCHED_SERVER_CATALOG_YAML_FIELDS_H_
#define WSCHED_SERVER_CATALOG_YAML_FIELDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/catalog/diagnostics.h"
#include "yaml-cpp/yaml.h"

namespace wsched::catalog {

// One YAML value and the path that names it in errors.
struct Field {
  YAML::Node node;  // Undefined when the key is absent.
  std::string path;

  // Absent keys and explicit nulls (`gpu:` with nothing after it) both mean
  // "not set", so an admin can blank a field without deleting the line.
  bool present() const { return node.IsDefined() && !node.IsNull(); }
};

// The fields of one YAML map whose allowed keys are known up front. Unknown
// and duplicate keys are reported when the map is opened; a typo gets the
// closest allowed key as a suggestion.
class MapFields {
 public:
  // Reports "must be a map" when `field` holds something else; then every
  // lookup answers "absent".
  MapFields(const Field& field, absl::Span<const absl::string_view> known_keys,
            Diagnostics& diagnostics);

  bool is_map() const { return is_map_; }
  // The value under `key`, which must be one of the known keys.
  Field Get(absl::string_view key) const;
  // As Get(), and reports "is required" when the key is absent or null.
  Field Require(absl::string_view key) const;

 private:
  std::string path_;
  YAML::Node node_;
  bool is_map_ = false;
  Diagnostics& diagnostics_;
};

// "a map", "a list", "null" or the scalar's text in quotes, for "got ..." messages.
std::string DescribeNode(const YAML::Node& node);

// Each reader returns nullopt for an absent field without complaint and for a
// malformed one after reporting it at the field's path.
std::optional<std::string> ReadString(const Field& field, Diagnostics& diagnostics);
// A scalar's text for a caller that parses it further; `expected` names
// what it should be in the message for a list or map ("a CPU quantity").
std::optional<std::string> ReadScalar(const Field& field, absl::string_view expected,
                                      Diagnostics& diagnostics);
std::optional<int64_t> ReadInt(const Field& field, Diagnostics& diagnostics);
// Only true/false (any case): "yes", "on" and friends are YAML 1.1 traps.
std::optional<bool> ReadBool(const Field& field, Diagnostics& diagnostics);
// The elements of a list, each with its "path[i]".
std::optional<std::vector<Field>> ReadList(const Field& field, Diagnostics& diagnostics);
std::optional<std::vector<std::string>> ReadStringList(const Field& field,
                                                       Diagnostics& diagnostics);
// A map of string to string (labels, selectors).
std::optional<std::map<std::string, std::string>> ReadStringMap(const Field& field,
                                                                Diagnostics& diagnostics);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_YAML_FIELDS_H_
