#include "server/catalog/yaml_fields.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/catalog/closest_name.h"

namespace wsched::catalog {
namespace {

// Long scalars are cut in messages so one bad value cannot flood the output.
constexpr size_t kQuotedValueLimit = 64;

std::string QuoteScalar(const std::string& text) {
  if (text.size() <= kQuotedValueLimit) return absl::StrCat("\"", text, "\"");
  return absl::StrCat("\"", text.substr(0, kQuotedValueLimit), "...\"");
}

// A scalar's text, or a report that the value is not a scalar.
std::optional<std::string> ScalarText(const Field& field, absl::string_view expected,
                                      Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  if (!field.node.IsScalar()) {
    diagnostics.ParseError(field.path,
                           absl::StrCat("must be ", expected, ", got ", DescribeNode(field.node)));
    return std::nullopt;
  }
  return field.node.Scalar();
}

// The name of a map in its own errors: the top level has no key above it.
std::string MapPath(const std::string& path) {
  if (path.empty()) return "catalog";
  if (absl::EndsWith(path, ": ")) return path.substr(0, path.size() - 2);
  return path;
}

}  // namespace

std::string DescribeNode(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return QuoteScalar(node.Scalar());
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "something else";
}

MapFields::MapFields(const Field& field, absl::Span<const absl::string_view> known_keys,
                     Diagnostics& diagnostics)
    : path_(field.path), node_(field.node), diagnostics_(diagnostics) {
  if (!field.present()) return;
  if (!field.node.IsMap()) {
    diagnostics_.ParseError(path_, absl::StrCat("must be a map, got ", DescribeNode(field.node)));
    return;
  }
  is_map_ = true;
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {
      diagnostics_.ParseError(MapPath(path_),
                              absl::StrCat("keys must be names, got ", DescribeNode(entry.first)));
      continue;
    }
    const std::string& key = entry.first.Scalar();
    const std::string key_path = FieldPath(path_, key);
    bool known = false;
    for (absl::string_view k : known_keys) known = known || k == key;
    if (!known) {
      std::string message = "unknown field";
      if (auto suggestion = ClosestName(key, known_keys)) {
        absl::StrAppend(&message, "; did you mean ", *suggestion, "?");
      }
      diagnostics_.ParseError(key_path, message);
    } else if (!seen.insert(key).second) {
      // yaml-cpp keeps the first of two equal keys without a word; an admin
      // editing the second one would see no effect.
      diagnostics_.ParseError(key_path, "appears more than once");
    }
  }
}

Field MapFields::Get(absl::string_view key) const {
  // The value is copied into the Field, never assigned over a node made
  // first: yaml-cpp's assignment merges the whole document's node set into
  // the target's, which made reading a catalog quadratic in its size.
  if (is_map_) {
    for (const auto& entry : node_) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) {
        return Field{entry.second, FieldPath(path_, key)};
      }
    }
  }
  return Field{YAML::Node(YAML::NodeType::Undefined), FieldPath(path_, key)};
}

Field MapFields::Require(absl::string_view key) const {
  Field field = Get(key);
  if (is_map_ && !field.present()) diagnostics_.ParseError(field.path, "is required");
  return field;
}

std::optional<std::string> ReadString(const Field& field, Diagnostics& diagnostics) {
  return ScalarText(field, "a string", diagnostics);
}

std::optional<std::string> ReadScalar(const Field& field, absl::string_view expected,
                                      Diagnostics& diagnostics) {
  return ScalarText(field, expected, diagnostics);
}

std::optional<int64_t> ReadInt(const Field& field, Diagnostics& diagnostics) {
  auto text = ScalarText(field, "a whole number", diagnostics);
  if (!text) return std::nullopt;
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value)) {
    diagnostics.ParseError(field.path, absl::StrCat(QuoteScalar(*text), " is not a whole number"));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> ReadBool(const Field& field, Diagnostics& diagnostics) {
  auto text = ScalarText(field, "true or false", diagnostics);
  if (!text) return std::nullopt;
  const std::string lower = absl::AsciiStrToLower(*text);
  if (lower == "true") return true;
  if (lower == "false") return false;
  diagnostics.ParseError(field.path,
                         absl::StrCat("must be true or false, got ", QuoteScalar(*text)));
  return std::nullopt;
}

std::optional<std::vector<Field>> ReadList(const Field& field, Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  if (!field.node.IsSequence()) {
    diagnostics.ParseError(field.path,
                           absl::StrCat("must be a list, got ", DescribeNode(field.node)));
    return std::nullopt;
  }
  std::vector<Field> elements;
  elements.reserve(field.node.size());
  int index = 0;
  for (const auto& element : field.node) {
    elements.push_back(Field{element, absl::StrCat(field.path, "[", index++, "]")});
  }
  return elements;
}

std::optional<std::vector<std::string>> ReadStringList(const Field& field,
                                                       Diagnostics& diagnostics) {
  auto elements = ReadList(field, diagnostics);
  if (!elements) return std::nullopt;
  std::vector<std::string> values;
  for (const Field& element : *elements) {
    if (!element.present()) {
      diagnostics.ParseError(element.path, "must be a string, got nothing");
    } else if (auto value = ReadString(element, diagnostics)) {
      values.push_back(*std::move(value));
    }
  }
  return values;
}

std::optional<std::map<std::string, std::string>> ReadStringMap(const Field& field,
                                                                Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  if (!field.node.IsMap()) {
    diagnostics.ParseError(field.path,
                           absl::StrCat("must be a map, got ", DescribeNode(field.node)));
    return std::nullopt;
  }
  std::map<std::string, std::string> values;
  for (const auto& entry : field.node) {
    if (!entry.first.IsScalar()) {
      diagnostics.ParseError(field.path,
                             absl::StrCat("keys must be names, got ", DescribeNode(entry.first)));
      continue;
    }
    const std::string& key = entry.first.Scalar();
    const Field value{entry.second, FieldPath(field.path, key)};
    // An empty label value is legal (Kubernetes allows it); null reads as "".
    std::string text;
    if (value.present()) {
      auto read = ReadString(value, diagnostics);
      if (!read) continue;
      text = *std::move(read);
    }
    if (!values.emplace(key, std::move(text)).second) {
      diagnostics.ParseError(value.path, "appears more than once");
    }
  }
  return values;
}

}  // namespace wsched::catalog
