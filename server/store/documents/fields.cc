#include "server/store/documents/fields.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace wsched::store::documents {

absl::Status CheckSchema(const Origin& origin) {
  if (origin.schema >= 1 && origin.schema <= kSchemaVersion) return absl::OkStatus();
  if (origin.schema > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        origin.table, " row ", origin.row, ": its document is of schema version ", origin.schema,
        ", written by a newer wsched; this one reads versions up to ", kSchemaVersion,
        ": run a wsched release at least as new as the one that wrote it"));
  }
  return absl::DataLossError(absl::StrCat(origin.table, " row ", origin.row,
                                          ": document schema version ", origin.schema,
                                          " is not a version (they start at 1)"));
}

std::optional<nlohmann::json> Decoding::Parse(absl::string_view json) {
  if (absl::Status s = CheckSchema(origin_); !s.ok()) {
    status_ = s;
    return std::nullopt;
  }
  nlohmann::json parsed = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    status_ = absl::DataLossError(absl::StrCat(origin_.table, " row ", origin_.row,
                                               ": stored document is not a JSON object"));
    return std::nullopt;
  }
  return parsed;
}

void Decoding::Fail(const std::string& path, absl::string_view problem) {
  if (!status_.ok()) return;  // The first error is the one worth reading.
  status_ = absl::DataLossError(
      absl::StrCat(origin_.table, " row ", origin_.row, ": field ", path, " ", problem));
}

std::string Fields::PathOf(const char* key) const {
  return path_.empty() ? key : absl::StrCat(path_, ".", key);
}

const nlohmann::json* Fields::Raw(const char* key) const {
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool Fields::Has(const char* key) const { return Raw(key) != nullptr; }

const nlohmann::json* Fields::List(const char* key) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr || j->is_array()) return j;
  decoding_.Fail(PathOf(key), "is not a list");
  return nullptr;
}

int64_t Fields::Int64(const char* key) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return 0;
  if (j->is_number_integer()) return j->get<int64_t>();
  int64_t value = 0;
  if (j->is_string() && absl::SimpleAtoi(j->get<std::string>(), &value)) return value;
  decoding_.Fail(PathOf(key), absl::StrCat("is not an integer: ", j->dump()));
  return 0;
}

int Fields::Int(const char* key) {
  int64_t value = Int64(key);
  if (value < INT32_MIN || value > INT32_MAX) {
    decoding_.Fail(PathOf(key), absl::StrCat("is out of range: ", value));
    return 0;
  }
  return static_cast<int>(value);
}

bool Fields::Bool(const char* key) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return false;
  if (j->is_boolean()) return j->get<bool>();
  decoding_.Fail(PathOf(key), absl::StrCat("is not true or false: ", j->dump()));
  return false;
}

std::string Fields::String(const char* key) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return "";
  if (j->is_string()) return j->get<std::string>();
  decoding_.Fail(PathOf(key), absl::StrCat("is not a string: ", j->dump()));
  return "";
}

std::vector<std::string> Fields::Strings(const char* key) {
  std::vector<std::string> out;
  const nlohmann::json* j = List(key);
  if (j == nullptr) return out;
  for (const auto& item : *j) {
    if (!item.is_string()) {
      decoding_.Fail(PathOf(key), absl::StrCat("holds a non-string: ", item.dump()));
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<int> Fields::Ints(const char* key) {
  std::vector<int> out;
  const nlohmann::json* j = List(key);
  if (j == nullptr) return out;
  for (const auto& item : *j) {
    if (!item.is_number_integer() || item.get<int64_t>() < INT32_MIN ||
        item.get<int64_t>() > INT32_MAX) {
      decoding_.Fail(PathOf(key), absl::StrCat("holds a non-integer: ", item.dump()));
      return {};
    }
    out.push_back(item.get<int>());
  }
  return out;
}

std::map<std::string, std::string> Fields::StringMap(const char* key) {
  std::map<std::string, std::string> out;
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return out;
  if (!j->is_object()) {
    decoding_.Fail(PathOf(key), "is not an object");
    return out;
  }
  for (const auto& [name, value] : j->items()) {
    if (!value.is_string()) {
      decoding_.Fail(PathOf(key), absl::StrCat("has a non-string value for ", name));
      return {};
    }
    out[name] = value.get<std::string>();
  }
  return out;
}

std::optional<absl::Time> Fields::Time(const char* key) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return std::nullopt;
  absl::Time time;
  std::string error;
  if (j->is_string() && absl::ParseTime(absl::RFC3339_full, j->get<std::string>(), &time, &error)) {
    return time;
  }
  decoding_.Fail(PathOf(key), absl::StrCat("is not an RFC 3339 time: ", j->dump()));
  return std::nullopt;
}

int Fields::Enum(const char* key, const std::vector<std::pair<const char*, int>>& names, int zero) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return zero;
  for (const auto& [name, value] : names) {
    if (j->is_string() && j->get<std::string>() == name) return value;
  }
  if (j->is_number_integer()) {
    // By number: the index into `names`, which lists the enum in order.
    int64_t number = j->get<int64_t>();
    if (number >= 0 && number < static_cast<int64_t>(names.size())) return names[number].second;
  }
  decoding_.Fail(PathOf(key), absl::StrCat("has an unknown value: ", j->dump()));
  return zero;
}

std::optional<Fields> Fields::Object(const char* key) {
  const nlohmann::json* j = Raw(key);
  if (j == nullptr) return std::nullopt;
  if (!j->is_object()) {
    decoding_.Fail(PathOf(key), "is not an object");
    return std::nullopt;
  }
  return Fields(*j, decoding_, PathOf(key));
}

std::vector<Fields> Fields::Objects(const char* key) {
  std::vector<Fields> out;
  const nlohmann::json* j = List(key);
  if (j == nullptr) return out;
  for (size_t i = 0; i < j->size(); ++i) {
    const nlohmann::json& item = (*j)[i];
    std::string path = absl::StrCat(PathOf(key), "[", i, "]");
    if (!item.is_object()) {
      decoding_.Fail(path, "is not an object");
      return {};
    }
    out.emplace_back(item, decoding_, std::move(path));
  }
  return out;
}

std::string Rfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", time, absl::UTCTimeZone());
}

}  // namespace wsched::store::documents
