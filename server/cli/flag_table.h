// Every flag wschedctl knows, in one table: the parser, the help and the
// shell completion all read it, so they cannot disagree.
#ifndef WSCHED_SERVER_CLI_FLAG_TABLE_H_
#define WSCHED_SERVER_CLI_FLAG_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

namespace wsched::cli {

enum class FlagKind { kBool, kString, kInt, kList, kDuration };

struct FlagSpec {
  // Canonical name, words joined by '_' ("dry_run"); "--dry-run" is the same.
  std::string_view name;
  // One-letter form ("-o json", "-ojson"); 0 = none.
  char short_name;
  FlagKind kind;
  // Placeholder of the value in the help ("HOST:PORT"); empty for bools.
  std::string_view value;
  std::string_view help;
  // Applies to every command (listed in the global help).
  bool global;
};

const std::vector<FlagSpec>& AllFlags();

// The flag named `name` after '-' became '_'; nullptr when unknown.
const FlagSpec* FindFlag(std::string_view name);
const FlagSpec* FindShortFlag(char short_name);

// "dry-run" and "dry_run" -> "dry_run".
std::string CanonicalFlagName(std::string_view name);

// "--dry-run", or "-o, --output=FORMAT", as the help shows it.
std::string FlagUsage(const FlagSpec& flag);

// "--dry-run": the spelling the help and the completion offer.
std::string DashedFlagName(const FlagSpec& flag);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_FLAG_TABLE_H_
