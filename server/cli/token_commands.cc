#include "server/cli/token_commands.h"

#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/grpc/credentials_file.h"
#include "server/cli/structured_output.h"
#include "server/grpc/token_hash.h"

namespace wsched::cli {
namespace {

namespace api = wsched::grpc_api;

constexpr char kUsage[] =
    "usage: wschedctl token create --role=ROLE [--name=N] [--orgs=a,b] [--projects=a,b] "
    "[--pools=a,b] [--node=N | --bootstrap]\n"
    "       wschedctl token hash --role=ROLE [--name=N] [scopes] < TOKEN_FILE\n";

// The entry for `token`, checked by the server's own parser so that what is
// printed is what the server accepts.
int PrintEntry(const std::string& token, bool print_token, const Options& options) {
  auto role = api::ParseRole(options.role);
  if (!role.ok()) {
    std::cerr << "--role: " << role.status().message() << "\n" << kUsage;
    return 2;
  }
  api::TokenDigest digest = api::Sha256(token);
  std::string name = options.name.empty()
                         ? absl::StrCat(options.role, "-", api::ToHex(digest).substr(0, 8))
                         : options.name;
  std::string entry =
      api::TokenEntryYaml(name, digest, *role,
                          {.orgs = options.orgs, .projects = options.projects,
                           .pools = options.pools, .node = options.node,
                           .bootstrap = options.bootstrap});
  auto check = api::CredentialTable::Parse(absl::StrCat("tokens:\n", entry, "\n"));
  if (!check.ok()) {
    std::cerr << check.status().message() << "\n";
    return 2;
  }
  if (options.structured()) {
    nlohmann::ordered_json out = {{"name", name}, {"sha256", api::ToHex(digest)}, {"entry", entry}};
    if (print_token) out["token"] = token;
    return PrintStructured(out, options);
  }
  if (print_token) {
    std::cout << token << "\n";
    std::cerr << "# line 1: the token, shown only now (hand it to the caller);\n"
              << "# line 2: its entry for the tokens file's tokens: list\n";
  }
  std::cout << entry << "\n";
  return 0;
}

}  // namespace

int TokenCommand(const std::vector<std::string>& args, const Options& options, std::istream& in) {
  if (args.size() != 1 || (args[0] != "create" && args[0] != "hash")) {
    std::cerr << kUsage;
    return 2;
  }
  if (args[0] == "create") {
    auto token = api::NewRandomToken();
    if (!token.ok()) {
      std::cerr << token.status().message() << "\n";
      return 1;
    }
    return PrintEntry(*token, /*print_token=*/true, options);
  }
  std::string line;
  std::getline(in, line);
  std::string token(absl::StripAsciiWhitespace(line));
  if (token.size() < api::kMinTokenLength) {
    std::cerr << "the token on stdin has " << token.size() << " characters; the server refuses "
              << "fewer than " << api::kMinTokenLength << " (use token create)\n";
    return 2;
  }
  return PrintEntry(token, /*print_token=*/false, options);
}

}  // namespace wsched::cli
