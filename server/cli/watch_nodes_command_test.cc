// `wschedctl get nodes --watch` without a server (watch_nodes_command.h):
// flags, the request, the table and the resume command.
#include "server/cli/watch_nodes_command.h"

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "server/cli/arg_parser.h"
#include "server/cli/options_from_flags.h"

namespace wsched::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

Options OptionsFor(const std::vector<std::string> &args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Options> options =
      OptionsFromFlags(parsed.ok() ? *parsed : ParsedArgs());
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? *options : Options();
}

v1::NodeChange NodeChangeOf(v1::NodeChange::What what, const std::string &name,
                            v1::NodeState state, int64_t version) {
  v1::NodeChange change;
  change.set_what(what);
  change.mutable_node()->mutable_info()->set_name(name);
  change.mutable_node()->mutable_info()->set_pool("gpu-h100");
  change.mutable_node()->mutable_info()->add_gpus()->set_health(
      v1::GPU_HEALTH_UNHEALTHY);
  change.mutable_node()->set_state(state);
  change.set_node_version(version);
  return change;
}

v1::WatchNodesResponse Message(v1::WatchNodesResponse::Kind kind,
                               int64_t version,
                               std::vector<v1::NodeChange> changes = {}) {
  v1::WatchNodesResponse response;
  response.set_kind(kind);
  response.set_version(version);
  for (auto &change : changes)
    *response.add_changes() = std::move(change);
  return response;
}

TEST(NodeWatchFlags, ResumeNeedsWatchAndANamedNodeIsNotAListing) {
  EXPECT_THAT(NodeWatchFlagsProblem(OptionsFor({"--resume-version=5"}), false),
              HasSubstr("--resume-version needs --watch"));
  EXPECT_THAT(
      NodeWatchFlagsProblem(OptionsFor({"-w", "--resume-version=-1"}), false),
      HasSubstr("1 or more"));
  EXPECT_THAT(NodeWatchFlagsProblem(OptionsFor({"-w"}), /*named=*/true),
              HasSubstr("--node=NAME"));
  EXPECT_THAT(
      NodeWatchFlagsProblem(OptionsFor({"-w", "--pool=gpu-h100"}), false),
      IsEmpty());
}

TEST(NodeWatchRequest, PoolAndNodeBecomeTheFilter) {
  v1::WatchNodesRequest request = NodeWatchRequest(OptionsFor(
      {"-w", "--pool=gpu-h100", "--node=n-1", "--resume-version=9"}));
  EXPECT_EQ(request.filter().pool(), "gpu-h100");
  EXPECT_EQ(request.filter().node_name(), "n-1");
  EXPECT_EQ(request.resume_version(), 9);
}

TEST(NodeWatchPrinter, TableListsAtSyncedThenARowPerChange) {
  using R = v1::WatchNodesResponse;
  using C = v1::NodeChange;
  Options options;
  NodeWatchPrinter printer(options, 0);
  std::ostringstream text;
  std::streambuf *old = std::cout.rdbuf(text.rdbuf());
  printer.Print(Message(
      R::KIND_EXISTING, 0,
      {NodeChangeOf(C::WHAT_EXISTING, "n-1", v1::NODE_STATE_READY, 3)}));
  printer.Print(Message(R::KIND_SYNCED, 40));
  printer.Print(Message(
      R::KIND_CHANGES, 42,
      {NodeChangeOf(C::WHAT_CHANGED, "n-1", v1::NODE_STATE_CORDONED, 7),
       NodeChangeOf(C::WHAT_REMOVED, "n-2", v1::NODE_STATE_UNSPECIFIED, 8)}));
  std::cout.rdbuf(old);
  EXPECT_EQ(printer.version(), 42);
  std::vector<std::string> lines =
      absl::StrSplit(text.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << text.str();
  EXPECT_THAT(lines[0], StartsWith("CHANGE    NAME  POOL      STATE"));
  EXPECT_THAT(lines[1], StartsWith("EXISTING  n-1   gpu-h100  ready"));
  EXPECT_THAT(lines[2], StartsWith("CHANGED   n-1   gpu-h100  cordoned"));
  EXPECT_THAT(lines[3], StartsWith("REMOVED   n-2   gpu-h100  -"));
}

TEST(NodeWatchResume, TheResumeCommandIsGetNodesWithItsFilters) {
  Options options = OptionsFor({"-w", "--pool=gpu-h100"});
  WatchedResource nodes{"nodes",
                        {{"--pool", options.pool}, {"--node", options.node}}};
  EXPECT_EQ(WatchCommandLine(nodes, options, 12),
            "wschedctl get nodes --watch --resume-version=12 --pool=gpu-h100");
  EXPECT_THAT(
      ResumeAdvice(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone"), 12,
                   nodes, options),
      HasSubstr(
          "resume with: wschedctl get nodes --watch --resume-version=12"));
}

} // namespace
} // namespace wsched::cli
