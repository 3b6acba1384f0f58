// wschedctl: the admin/operator CLI. Thin: each command lives in its own file.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "server/cli/catalog_commands.h"
#include "server/cli/client.h"
#include "server/cli/server_info.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "wsched-server gRPC address");
ABSL_FLAG(std::string, token, "", "bearer token (default: $WSCHED_TOKEN)");
ABSL_FLAG(bool, dry_run, false, "catalog apply: validate and print the diff, change nothing");

namespace {

constexpr char kUsage[] = R"(wschedctl COMMAND [ARGS] [--server=HOST:PORT] [--token=T]

Commands:
  health                 health check of the server (SERVING or not)
  rpcs                   list the server's services and RPCs (server reflection)
  catalog validate FILE  check a catalog file or directory offline; prints every error
  catalog diff FILE      what applying FILE would change (server-side dry run)
  catalog apply FILE     apply FILE atomically (all or nothing); --dry_run = diff
  catalog show           the stored catalog as YAML
  classes                list workspace classes with versions (etags)
)";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  wsched::cli::Client client;
  client.channel =
      grpc::CreateChannel(absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials());
  client.token = absl::GetFlag(FLAGS_token);
  if (client.token.empty() && std::getenv("WSCHED_TOKEN") != nullptr) {
    client.token = std::getenv("WSCHED_TOKEN");
  }
  std::string command = positional[1];
  std::vector<std::string> args(positional.begin() + 2, positional.end());
  if (command == "health") return wsched::cli::Health(client);
  if (command == "rpcs") return wsched::cli::ListRpcs(client);
  if (command == "catalog") {
    return wsched::cli::CatalogCommand(client, args, absl::GetFlag(FLAGS_dry_run));
  }
  if (command == "classes") return wsched::cli::ClassesCommand(client, args);
  std::cerr << "unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}
