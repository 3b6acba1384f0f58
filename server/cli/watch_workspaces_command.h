// `wschedctl get workspaces --watch` (kubectl get -w): PlacementService.
// WatchWorkspaces as a table that grows by a row per change, or one JSON
// line (YAML document) per message with -o json|yaml. The pieces apart
// from the call are here so that they can be tested without a server.
#ifndef WSCHED_SERVER_CLI_WATCH_WORKSPACES_COMMAND_H_
#define WSCHED_SERVER_CLI_WATCH_WORKSPACES_COMMAND_H_

#include <cstdint>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "server/cli/client.h"
#include "server/cli/options.h"
#include "server/cli/output.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::cli {

// Why the flags do not go together for `get workspaces` (`get workspace
// NAME` when `named`): one line naming the flag and the rule; "" when they
// do. --resume-version needs --watch; --org, --project and --class filter
// only a watch (ListWorkspaces has no such filters).
std::string WatchFlagsProblem(const Options& options, bool named);

// The request the flags ask for: --node, --pool, --org, --project, --class
// and --state (a comma-separated list) as the filter, --resume-version.
// InvalidArgument naming a bad --state.
absl::StatusOr<v1::WatchWorkspacesRequest> WatchRequest(const Options& options);

// The first column of a change's row: "PLACED", "IDLE", "IDLE-ENDED",
// "STOPPED (left filter)".
std::string ChangeLabel(const v1::WorkspaceChange& change);

// The command line that watches with the same filters and output again:
// from `version` (--resume-version), or with a listing when it is 0.
std::string WatchCommandLine(const Options& options, int64_t version);

// What to tell after the stream ended with `status` having reached
// `version`: the command to resume with, or to list again; "" when neither
// helps (resuming would only repeat the error, or no version was reached:
// the same command lists again).
std::string ResumeAdvice(const grpc::Status& status, int64_t version, const Options& options);

// Prints a stream's messages as they arrive and keeps the version it
// reached, which is what a resumed watch starts from.
class WorkspaceWatchPrinter {
 public:
  // `version`: the --resume-version the stream starts after (0: it lists).
  WorkspaceWatchPrinter(const Options& options, int64_t version);

  void Print(const v1::WatchWorkspacesResponse& response);
  // The version of the last SYNCED, CHANGES or BOOKMARK message.
  int64_t version() const { return version_; }

 private:
  std::vector<std::string> Row(const v1::WorkspaceChange& change) const;

  const Options& options_;
  int64_t version_;
  StreamTable table_;
};

// Watches until the stream ends (exit 1 on an error, with the advice on
// stderr) or Ctrl-C (exit 0; stderr names the version to resume from).
int WatchWorkspaces(const Client& client, const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_WATCH_WORKSPACES_COMMAND_H_
