#include "server/cli/output.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/cli/client.h"
#include "server/cli/error_details.h"

namespace wsched::cli {

Table::Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

void Table::Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

void Table::Print(std::string_view empty, bool headers) const {
  if (rows_.size() == 1 && !empty.empty()) {
    (headers ? std::cout : std::cerr) << empty << "\n";
    return;
  }
  std::vector<size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (size_t r = headers ? 0 : 1; r < rows_.size(); ++r) {
    const auto& row = rows_[r];
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
}

StreamTable::StreamTable(std::vector<std::string> header, bool headers)
    : header_(std::move(header)), header_pending_(headers) {
  if (headers) Widen(header_);
}

void StreamTable::Hold(std::vector<std::string> row) {
  Widen(row);
  held_.push_back(std::move(row));
}

void StreamTable::Flush() {
  if (header_pending_) PrintRow(header_);
  header_pending_ = false;
  for (const auto& row : held_) PrintRow(row);
  held_.clear();
  // A watch is read as it happens, often through a pipe: no buffering.
  std::cout << std::flush;
}

void StreamTable::Add(std::vector<std::string> row) {
  Widen(row);
  held_.push_back(std::move(row));
  Flush();
}

void StreamTable::Widen(const std::vector<std::string>& row) {
  if (widths_.size() < row.size()) widths_.resize(row.size(), 0);
  for (size_t i = 0; i < row.size(); ++i) widths_[i] = std::max(widths_[i], row[i].size());
}

void StreamTable::PrintRow(const std::vector<std::string>& row) const {
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    line += row[i];
    if (i + 1 < row.size()) line += std::string(widths_[i] - row[i].size() + 2, ' ');
  }
  std::cout << line << "\n";
}

int PrintJson(const google::protobuf::Message& message, bool one_line) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = !one_line;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string text;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!status.ok()) {
    std::cerr << "cannot print the response as JSON: " << status.ToString() << "\n";
    return 1;
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();
  std::cout << text << std::endl;
  return 0;
}

int Fail(std::string_view what, const grpc::Status& status) {
  std::cerr << what << ": " << Describe(status) << "\n";
  for (const std::string& line : DetailLines(status)) std::cerr << "  " << line << "\n";
  const std::string reason = ErrorReason(status);
  switch (status.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
      std::cerr << "hint: pass a token with --token or $WSCHED_TOKEN\n";
      break;
    case grpc::StatusCode::PERMISSION_DENIED:
      if (reason == "OUTSIDE_TOKEN_SCOPE") {
        std::cerr << "hint: this token is scoped to other projects, orgs or pools\n";
      } else {
        std::cerr << "hint: this token's role may not call this RPC\n";
      }
      break;
    case grpc::StatusCode::UNAVAILABLE:
      std::cerr << "hint: is wsched-server running at the --server address?\n";
      break;
    case grpc::StatusCode::UNIMPLEMENTED:
      std::cerr << "hint: this server does not implement the RPC (yet)\n";
      break;
    default:
      break;
  }
  return 1;
}

std::string Age(const google::protobuf::Timestamp& time) {
  if (time.seconds() == 0 && time.nanos() == 0) return "-";
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  int64_t age = std::max<int64_t>(0, now - time.seconds());
  if (age < 120) return absl::StrCat(age, "s");
  if (age < 120 * 60) return absl::StrCat(age / 60, "m");
  if (age < 48 * 3600) return absl::StrCat(age / 3600, "h");
  return absl::StrCat(age / 86400, "d");
}

std::string TimeText(const google::protobuf::Timestamp& time) {
  if (time.seconds() == 0 && time.nanos() == 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(time.seconds());
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string ShortEnumName(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
  std::string text = absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  std::replace(text.begin(), text.end(), '_', '-');
  return text.empty() ? "?" : text;
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  return absl::StrJoin(parts, absl::string_view(separator.data(), separator.size()));
}

std::string PrettyJson(const std::string& text) {
  // ordered_json keeps the server's key order (cdiVersion first).
  nlohmann::ordered_json parsed =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return text;
  return parsed.dump(2);
}

}  // namespace wsched::cli
