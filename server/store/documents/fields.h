// Reading one stored document field by field (documents.h). Version 1
// documents are proto3 JSON: a field left out is its zero value, 64-bit
// integers may be strings, enums are names, times are RFC 3339 strings. The
// first field of the wrong type is the error, named by its path.
#ifndef WSCHED_SERVER_STORE_DOCUMENTS_FIELDS_H_
#define WSCHED_SERVER_STORE_DOCUMENTS_FIELDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/store/documents/documents.h"

namespace wsched::store::documents {

// One document being decoded: its origin and the first error found.
class Decoding {
 public:
  explicit Decoding(const Origin& origin) : origin_(origin) {}
  // Parses `json`; nullopt (and the error) when it is not a JSON object or
  // its schema is not one this binary reads.
  std::optional<nlohmann::json> Parse(absl::string_view json);
  void Fail(const std::string& path, absl::string_view problem);
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  Origin origin_;
  absl::Status status_;
};

// The fields of one JSON object inside a document; a missing or null
// field reads as its zero value.
class Fields {
 public:
  Fields(const nlohmann::json& object, Decoding& decoding, std::string path = "")
      : object_(object), decoding_(decoding), path_(std::move(path)) {}

  bool Has(const char* key) const;
  int64_t Int64(const char* key);
  int Int(const char* key);
  bool Bool(const char* key);
  std::string String(const char* key);
  std::vector<std::string> Strings(const char* key);
  std::vector<int> Ints(const char* key);
  std::map<std::string, std::string> StringMap(const char* key);
  std::optional<absl::Time> Time(const char* key);
  // An enum stored by name (or by number, as proto3 JSON allows): the
  // value of the name, or `zero` for a missing field.
  int Enum(const char* key, const std::vector<std::pair<const char*, int>>& names, int zero = 0);
  std::optional<Fields> Object(const char* key);
  std::vector<Fields> Objects(const char* key);
  // The raw value, for fields with more than one shape (nullptr when missing).
  const nlohmann::json* Raw(const char* key) const;
  std::string PathOf(const char* key) const;
  Decoding& decoding() { return decoding_; }

 private:
  // The field when it is a list; nullptr (and the error, unless missing)
  // otherwise.
  const nlohmann::json* List(const char* key);

  const nlohmann::json& object_;
  Decoding& decoding_;
  std::string path_;
};

// RFC 3339 in UTC with a "Z", as proto3 JSON writes times.
std::string Rfc3339(absl::Time time);

}  // namespace wsched::store::documents

#endif  // WSCHED_SERVER_STORE_DOCUMENTS_FIELDS_H_
