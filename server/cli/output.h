// Output helpers shared by the wschedctl commands: compact tables, JSON, and
// short names for the API's enums.
#ifndef WSCHED_SERVER_CLI_OUTPUT_H_
#define WSCHED_SERVER_CLI_OUTPUT_H_

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>
#include <google/protobuf/timestamp.pb.h>
#include <grpcpp/grpcpp.h>

namespace wsched::cli {

// A table printed with columns as wide as their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void Add(std::vector<std::string> row);
  // Prints the header (unless !headers) and rows; prints `empty` instead when
  // there are no rows, on stderr without headers so a script reads nothing.
  void Print(std::string_view empty = "", bool headers = true) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// A table whose rows arrive over time (a watch). Held rows (a listing) are
// printed together by Flush, with columns that fit them all; a row added
// after that prints at once, padded to the widest cell seen so far in each
// column, so the columns line up unless a later cell is wider (and from
// then on they line up with it).
class StreamTable {
 public:
  // headers = false: no header row (--no-headers).
  StreamTable(std::vector<std::string> header, bool headers);
  // Holds `row` until the next Flush or Add.
  void Hold(std::vector<std::string> row);
  // Prints the header (the first time) and the held rows, and flushes stdout.
  void Flush();
  // Flush, then `row`.
  void Add(std::vector<std::string> row);

 private:
  void Widen(const std::vector<std::string>& row);
  void PrintRow(const std::vector<std::string>& row) const;

  std::vector<std::string> header_;
  bool header_pending_;
  std::vector<std::vector<std::string>> held_;
  std::vector<size_t> widths_;
};

// Prints `message` as indented JSON (or one line when `one_line`, for streams);
// returns the exit code.
int PrintJson(const google::protobuf::Message& message, bool one_line = false);

// Prints "<what>: [code N] message" on stderr, with a hint for common codes;
// returns exit code 1.
int Fail(std::string_view what, const grpc::Status& status);

// "5s", "3m", "2h", "4d" since `time`; "-" when unset.
std::string Age(const google::protobuf::Timestamp& time);
// "2024-05-01T12:00:00Z"; "-" when unset.
std::string TimeText(const google::protobuf::Timestamp& time);

// The enum value name without `prefix`, lower case, '_' as '-':
// ("NODE_STATE_READY", "NODE_STATE_") -> "ready".
std::string ShortEnumName(std::string_view name, std::string_view prefix);

// "-" for an empty string.
std::string OrDash(const std::string& text);

// "a,b,c".
std::string Join(const std::vector<std::string>& parts, std::string_view separator = ",");

// JSON text indented by two spaces; the text unchanged when it is not JSON.
std::string PrettyJson(const std::string& text);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_OUTPUT_H_
