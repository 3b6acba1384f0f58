// `wschedctl get workspaces --watch` (kubectl get -w): PlacementService.
// WatchWorkspaces as a table that grows by a row per change, or one JSON
// line (YAML document) per message with -o json|yaml. The pieces apart
// from the call are here so that they can be tested without a server.
#ifndef WSCHED_SERVER_CLI_WATCH_WORKSPACES_COMMAND_H_
#define WSCHED_SERVER_CLI_WATCH_WORKSPACES_COMMAND_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "server/cli/client.h"
#include "server/cli/options.h"
#include "server/cli/output.h"
#include "server/cli/structured_output.h"
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

// What differs between the watches wschedctl runs (get workspaces, get
// nodes): the resource, and the filter flags a resume command repeats.
struct WatchedResource {
  std::string plural; // "workspaces", "nodes"
  std::vector<std::pair<std::string, std::string>>
      filters; // {"--pool", value}, ...
};
// As WatchCommandLine and ResumeAdvice above, for any watched resource.
std::string WatchCommandLine(const WatchedResource &watched,
                             const Options &options, int64_t version);
std::string ResumeAdvice(const grpc::Status &status, int64_t version,
                         const WatchedResource &watched,
                         const Options &options);

// Prints a stream's messages as they arrive (a table that grows by a row
// per change, or one JSON line or YAML document per message) and keeps the
// version it reached, which is what a resumed watch starts from. Every
// watch response has the same kinds (KIND_EXISTING, ...) and `changes`.
template <typename Response, typename Change> class WatchPrinter {
public:
  using RowOf = std::function<std::vector<std::string>(const Change &)>;
  // `version`: the --resume-version the stream starts after (0: it lists).
  WatchPrinter(const Options &options, int64_t version,
               std::vector<std::string> header, RowOf row)
      : options_(options), version_(version), row_(std::move(row)),
        table_(std::move(header), !options.no_headers) {}

  void Print(const Response &response) {
    // EXISTING carries no version; the others bring the stream to theirs.
    if (response.version() > 0)
      version_ = response.version();
    if (options_.structured()) {
      PrintStructured(response, options_, /*stream=*/true);
      return;
    }
    switch (response.kind()) {
    case Response::KIND_EXISTING:
      // Held until SYNCED, so the listing's columns fit all of its rows.
      for (const auto &change : response.changes())
        table_.Hold(row_(change));
      break;
    case Response::KIND_SYNCED:
      table_.Flush();
      break;
    case Response::KIND_BOOKMARK:
      break;
    default:
      for (const auto &change : response.changes())
        table_.Add(row_(change));
      break;
    }
  }
  // The version of the last SYNCED, CHANGES or BOOKMARK message.
  int64_t version() const { return version_; }

 private:
  const Options& options_;
  int64_t version_;
  const RowOf row_;
  StreamTable table_;
};

class WorkspaceWatchPrinter final
    : public WatchPrinter<v1::WatchWorkspacesResponse, v1::WorkspaceChange> {
public:
  WorkspaceWatchPrinter(const Options &options, int64_t version);
};

// Runs a watch until the stream ends (exit 1 on an error, with the advice
// on stderr) or Ctrl-C (exit 0; stderr names the version to resume from).
// `stream` makes the call on the context it is given, reads (and prints)
// until the stream ends and returns how it ended; `version` is the version
// reached.
int RunWatch(const Client &client, const WatchedResource &watched,
             const Options &options,
             const std::function<grpc::Status(grpc::ClientContext *)> &stream,
             const std::function<int64_t()> &version);

int WatchWorkspaces(const Client& client, const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_WATCH_WORKSPACES_COMMAND_H_
