#include "server/cli/connection_settings.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/cli/duration_flag.h"

namespace wsched::cli {
namespace {

std::optional<std::string> NonEmpty(const std::optional<std::string>& value) {
  if (!value.has_value() || value->empty()) return std::nullopt;
  return value;
}

// The content without surrounding whitespace, so `echo TOKEN > file` works.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path, std::string_view source) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(buffer.str()));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat(std::string(source), ": ", path, " is empty"));
  return token;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::StatusOr<std::string> ResolveToken(const ParsedArgs& args, const EnvLookup& env) {
  if (args.Has("token")) return args.Get("token");
  if (args.Has("token_file")) return ReadTokenFile(args.Get("token_file"), "--token-file");
  if (auto token = NonEmpty(env("WSCHED_TOKEN"))) return *token;
  if (auto path = NonEmpty(env("WSCHED_TOKEN_FILE"))) return ReadTokenFile(*path, "$WSCHED_TOKEN_FILE");
  return std::string();
}

absl::StatusOr<ConnectionSettings> ResolveConnection(const ParsedArgs& args, const EnvLookup& env) {
  ConnectionSettings settings;
  if (args.Has("server")) {
    settings.server = args.Get("server");
  } else {
    settings.server = NonEmpty(env("WSCHED_SERVER")).value_or(kDefaultServer);
  }
  absl::StatusOr<std::string> token = ResolveToken(args, env);
  if (!token.ok()) return token.status();
  settings.token = *std::move(token);
  if (args.Has("timeout")) {
    absl::StatusOr<absl::Duration> timeout = ParseDurationFlag(args.Get("timeout"));
    if (!timeout.ok()) return timeout.status();
    settings.timeout = *timeout;
  }
  settings.tls.tls = args.GetBool("tls");
  settings.tls.ca_path = args.Get("tls_ca");
  settings.tls.cert_path = args.Get("tls_cert");
  settings.tls.key_path = args.Get("tls_key");
  settings.tls.server_name = args.Get("tls_server_name");
  return settings;
}

}  // namespace wsched::cli
