// Splits wschedctl's command line into positional words and flags, the way
// kubectl users expect: flags anywhere, "--dry-run" == "--dry_run",
// "--output json" == "--output=json", "-o json" == "-ojson", "--no-X" for a
// bool X, and "--" ending the flags.
#ifndef WSCHED_SERVER_CLI_ARG_PARSER_H_
#define WSCHED_SERVER_CLI_ARG_PARSER_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace wsched::cli {

struct ParsedArgs {
  // The words that are not flags: the command and its arguments.
  std::vector<std::string> positional;
  // Canonical flag name -> its value as given ("true"/"false" for bools); the
  // last one wins when a flag repeats. Values were checked against the kind.
  std::map<std::string, std::string, std::less<>> flags;
  // Every value of each flag, in order (for the repeatable ones, --set).
  std::map<std::string, std::vector<std::string>, std::less<>> all;

  bool Has(std::string_view name) const { return flags.find(name) != flags.end(); }
  // The flag's value; "" when not given.
  std::string Get(std::string_view name) const;
  // A bool flag: false when not given.
  bool GetBool(std::string_view name) const;
  // Every value given, in order; empty when not given.
  std::vector<std::string> GetAll(std::string_view name) const;
};

// `args` without the program name. InvalidArgument names the offending
// flag: unknown, missing value, or a value of the wrong kind.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_ARG_PARSER_H_
