#include "server/cli/help_text.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/cli/flag_table.h"
#include "server/cli/resource_names.h"

namespace wsched::cli {
namespace {

constexpr size_t kColumn = 30;

constexpr char kExitStatus[] =
    "Exit status: 0 ok; 1 the server refused or failed the call (the message names the gRPC\n"
    "code, e.g. [code 4 DEADLINE_EXCEEDED]), a catalog did not validate, the server is not\n"
    "SERVING, or a local file could not be read; 2 bad usage (unknown command or flag, a\n"
    "missing or malformed argument, an unreadable token file).\n";

// "  synopsis   summary", the summary on its own line when the synopsis is long.
void AppendLine(std::string* out, std::string_view left, std::string_view right) {
  absl::StrAppend(out, "  ", std::string(left));
  if (left.size() + 2 < kColumn) {
    absl::StrAppend(out, std::string(kColumn - left.size() - 2, ' '), std::string(right), "\n");
  } else {
    absl::StrAppend(out, "\n", std::string(kColumn, ' '), std::string(right), "\n");
  }
}

void AppendFlags(std::string* out, bool global, const std::vector<std::string_view>& names) {
  for (const FlagSpec& flag : AllFlags()) {
    bool wanted = global ? flag.global
                         : std::find(names.begin(), names.end(), flag.name) != names.end();
    if (wanted) AppendLine(out, FlagUsage(flag), flag.help);
  }
}

std::string ResourceList() {
  std::string out;
  for (const ResourceSpec& spec : AllResources()) {
    std::vector<std::string> names(spec.other_names.begin(), spec.other_names.end());
    AppendLine(&out, spec.plural,
               absl::StrCat("also ", absl::StrJoin(names, ", "),
                            spec.listable ? "" : "; needs a NAME (the API lists none)",
                            spec.named ? "" : "; a list only"));
  }
  return out;
}

}  // namespace

std::string GlobalUsage() {
  std::string out =
      "wschedctl COMMAND [ARGS] [--server=HOST:PORT] [--token=T | --token-file=FILE]\n"
      "          [-o table|wide|json|yaml|csv] [--no-headers] [--timeout=30s]\n"
      "          [--tls] [--tls-ca=CA.pem] [--tls-cert=CERT.pem --tls-key=KEY.pem]\n";
  std::string_view group;
  for (const CommandSpec& command : AllCommands()) {
    if (command.group != group) {
      group = command.group;
      absl::StrAppend(&out, "\n", std::string(group), ":\n");
    }
    for (const UsageLine& line : command.usage) AppendLine(&out, line.synopsis, line.summary);
  }
  absl::StrAppend(&out, "\nResources of get and describe (delete takes nodes only):\n", ResourceList());
  absl::StrAppend(&out, "\nGlobal flags (flags take '-' or '_': --dry-run = --dry_run):\n");
  AppendFlags(&out, /*global=*/true, {});
  absl::StrAppend(&out,
                  "\nEnvironment:\n"
                  "  WSCHED_SERVER               the address when --server is not given\n"
                  "  WSCHED_TOKEN                the token when neither --token nor --token-file is\n"
                  "  WSCHED_TOKEN_FILE           a file holding the token, when none of the above is\n",
                  "\n", kExitStatus);
  return out;
}

std::string CommandUsage(const CommandSpec& command) {
  std::string out = "usage:\n";
  for (const UsageLine& line : command.usage) {
    absl::StrAppend(&out, "  wschedctl ", std::string(line.synopsis), "\n      ",
                    std::string(line.summary), "\n");
  }
  if (command.name == "get" || command.name == "describe") {
    absl::StrAppend(&out, "\nResources:\n", ResourceList());
  }
  if (!command.flags.empty()) {
    absl::StrAppend(&out, "\nFlags:\n");
    AppendFlags(&out, /*global=*/false, command.flags);
  }
  absl::StrAppend(&out, "\nGlobal flags (every command):\n");
  AppendFlags(&out, /*global=*/true, {});
  absl::StrAppend(&out, "\n", kExitStatus);
  return out;
}

}  // namespace wsched::cli
