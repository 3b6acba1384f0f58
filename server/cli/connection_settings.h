// Where and as whom wschedctl calls: flags first, then the environment, then
// defaults, so one exported WSCHED_SERVER/WSCHED_TOKEN serves a whole shell.
#ifndef WSCHED_SERVER_CLI_CONNECTION_SETTINGS_H_
#define WSCHED_SERVER_CLI_CONNECTION_SETTINGS_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/cli/arg_parser.h"
#include "server/grpc/channel_credentials.h"

namespace wsched::cli {

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";
inline constexpr absl::Duration kDefaultTimeout = absl::Seconds(30);

struct ConnectionSettings {
  std::string server;
  std::string token;  // Empty = none. Never printed.
  absl::Duration timeout = kDefaultTimeout;
  grpc_api::ClientTlsOptions tls;
};

// The variable's value; nullopt when unset. Tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnvironment();

// The token, in order: --token, --token-file, $WSCHED_TOKEN,
// $WSCHED_TOKEN_FILE (an empty variable counts as unset). InvalidArgument
// when a token file cannot be read or is empty; the message names the file,
// never its content.
absl::StatusOr<std::string> ResolveToken(const ParsedArgs& args, const EnvLookup& env);

// --server, else $WSCHED_SERVER, else kDefaultServer; --timeout; --tls*.
absl::StatusOr<ConnectionSettings> ResolveConnection(const ParsedArgs& args, const EnvLookup& env);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_CONNECTION_SETTINGS_H_
