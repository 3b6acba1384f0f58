#include "server/cli/watch_workspaces_command.h"

#include <iostream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "server/cli/arg_parser.h"
#include "server/cli/command_table.h"
#include "server/cli/flag_table.h"
#include "server/cli/help_text.h"
#include "server/cli/options_from_flags.h"
#include "server/cli/run.h"

namespace wsched::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

// What a stream (std::cout, std::cerr) printed while this lives.
class Capture {
 public:
  explicit Capture(std::ostream& stream) : stream_(stream), old_(stream.rdbuf(text_.rdbuf())) {}
  ~Capture() { stream_.rdbuf(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostream& stream_;
  std::ostringstream text_;
  std::streambuf* old_;
};

Options OptionsFor(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Options> options = OptionsFromFlags(parsed.ok() ? *parsed : ParsedArgs());
  EXPECT_TRUE(options.ok()) << options.status();
  return options.ok() ? *options : Options();
}

// wschedctl ARGS against a port nothing listens on: a usage error exits 2
// before any call, where a call would fail UNAVAILABLE (exit 1).
int RunOffline(std::vector<std::string> args, std::string* err) {
  args.push_back("--server=127.0.0.1:1");
  Capture capture(std::cerr);
  std::istringstream in;
  int rc = Run(args, in, [](const std::string&) { return std::nullopt; });
  *err = capture.text();
  return rc;
}

grpc::Status WithReason(grpc::StatusCode code, const std::string& reason,
                        std::map<std::string, std::string> metadata) {
  google::rpc::ErrorInfo info;
  info.set_reason(reason);
  info.set_domain("wsched.io");
  info.mutable_metadata()->insert(metadata.begin(), metadata.end());
  google::rpc::Status rpc;
  rpc.set_code(static_cast<int>(code));
  rpc.add_details()->PackFrom(info);
  return grpc::Status(code, "refused", rpc.SerializeAsString());
}

v1::WorkspaceChange Change(v1::WorkspaceChange::What what, const std::string& id,
                           v1::WorkspaceState state) {
  v1::WorkspaceChange change;
  change.set_what(what);
  change.mutable_workspace()->set_id(id);
  change.mutable_workspace()->set_state(state);
  change.mutable_workspace()->set_class_id("gpu-1x");
  return change;
}

v1::WatchWorkspacesResponse Message(v1::WatchWorkspacesResponse::Kind kind, int64_t version,
                                    std::vector<v1::WorkspaceChange> changes = {}) {
  v1::WatchWorkspacesResponse response;
  response.set_kind(kind);
  response.set_version(version);
  for (auto& change : changes) *response.add_changes() = std::move(change);
  return response;
}

TEST(WatchFlags, WatchHasAShortFormAndResumeVersionTakesAnInteger) {
  ASSERT_NE(FindFlag("watch"), nullptr);
  EXPECT_EQ(FindShortFlag('w'), FindFlag("watch"));
  ASSERT_NE(FindFlag("resume_version"), nullptr);
  EXPECT_EQ(FindFlag("resume_version")->kind, FlagKind::kInt);
  Options options = OptionsFor({"get", "ws", "-w", "--resume-version=42"});
  EXPECT_TRUE(options.watch);
  EXPECT_EQ(options.resume_version, 42);
  EXPECT_EQ(OptionsFor({"--resume_version", "7"}).resume_version, 7);
  EXPECT_FALSE(OptionsFor({"get", "ws"}).resume_version.has_value());
  EXPECT_FALSE(ParseArgs({"--resume-version=latest"}).ok());
}

TEST(WatchFlags, ResumeVersionWithoutWatchIsRefusedNamingTheRule) {
  std::string problem = WatchFlagsProblem(OptionsFor({"--resume-version=5"}), false);
  EXPECT_THAT(problem, HasSubstr("--resume-version needs --watch"));
  EXPECT_THAT(WatchFlagsProblem(OptionsFor({"-w", "--resume-version=-1"}), false),
              HasSubstr("--resume-version must be"));
  EXPECT_THAT(WatchFlagsProblem(OptionsFor({"-w"}), /*named=*/true),
              HasSubstr("wschedctl watch NAME"));
  EXPECT_THAT(WatchFlagsProblem(OptionsFor({"--org=acme"}), false), HasSubstr("--org"));
  EXPECT_THAT(WatchFlagsProblem(OptionsFor({"-w", "--resume-version=5", "--org=acme"}), false),
              IsEmpty());
  EXPECT_THAT(WatchFlagsProblem(OptionsFor({"-w", "--resume-version=0"}), false), IsEmpty());
  EXPECT_THAT(WatchFlagsProblem(OptionsFor({"--pool=p", "--state=pending"}), false), IsEmpty());
}

TEST(WatchFlags, UsageErrorsExitTwoWithoutCallingTheServer) {
  std::string err;
  EXPECT_EQ(RunOffline({"get", "workspaces", "--resume-version=5"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--resume-version needs --watch"));
  EXPECT_EQ(RunOffline({"workspaces", "--resume-version=5"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("--resume-version needs --watch"));
  EXPECT_EQ(RunOffline({"get", "pools", "--watch"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("get workspaces and get nodes only"));
  EXPECT_EQ(RunOffline({"get", "ws", "ws-1", "-w"}, &err), 2);
  EXPECT_EQ(RunOffline({"get", "ws", "-w", "--state=sleeping"}, &err), 2);
  EXPECT_THAT(err, HasSubstr("unknown --state \"sleeping\""));
}

TEST(WatchFlags, HelpOfGetShowsTheWatch) {
  std::string help = CommandUsage(*FindCommand("get"));
  EXPECT_THAT(help, HasSubstr("wschedctl get workspaces -w|--watch [--resume-version=N]"));
  EXPECT_THAT(help, HasSubstr("-w, --watch"));
  EXPECT_THAT(help, HasSubstr("--resume-version=N"));
  EXPECT_THAT(CommandUsage(*FindCommand("workspaces")), HasSubstr("-w, --watch"));
}

TEST(WatchRequest, FlagsBecomeTheFilter) {
  absl::StatusOr<v1::WatchWorkspacesRequest> request = WatchRequest(
      OptionsFor({"-w", "--node=n-1", "--pool=gpu-h100", "--org=acme", "--project=ml",
                  "--class=gpu-1x", "--state=pending,PLACED", "--resume-version=9"}));
  ASSERT_TRUE(request.ok()) << request.status();
  const v1::WorkspaceWatchFilter& filter = request->filter();
  EXPECT_EQ(filter.node_name(), "n-1");
  EXPECT_EQ(filter.pool(), "gpu-h100");
  EXPECT_EQ(filter.org_id(), "acme");
  EXPECT_EQ(filter.project_id(), "ml");
  EXPECT_EQ(filter.class_id(), "gpu-1x");
  EXPECT_THAT(filter.states(),
              ElementsAre(v1::WORKSPACE_STATE_PENDING, v1::WORKSPACE_STATE_PLACED));
  EXPECT_EQ(request->resume_version(), 9);
  EXPECT_EQ(WatchRequest(OptionsFor({"-w"}))->filter().states_size(), 0);
  EXPECT_FALSE(WatchRequest(OptionsFor({"-w", "--state=placed,gone"})).ok());
}

TEST(ChangeLabel, SaysWhatHappened) {
  using W = v1::WorkspaceChange;
  EXPECT_EQ(ChangeLabel(Change(W::WHAT_PLACED, "a", v1::WORKSPACE_STATE_PLACED)), "PLACED");
  EXPECT_EQ(ChangeLabel(Change(W::WHAT_LOST, "a", v1::WORKSPACE_STATE_LOST)), "LOST");
  EXPECT_EQ(ChangeLabel(Change(W::WHAT_DELETED, "a", v1::WORKSPACE_STATE_STOPPED)), "DELETED");
  v1::WorkspaceChange idle = Change(W::WHAT_IDLE_CHANGED, "a", v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(ChangeLabel(idle), "IDLE-ENDED");
  idle.mutable_workspace()->mutable_event()->set_kind(v1::WorkspaceEvent::KIND_IDLE);
  EXPECT_EQ(ChangeLabel(idle), "IDLE");
  idle.mutable_workspace()->mutable_event()->set_kind(v1::WorkspaceEvent::KIND_BUDGET_WARNING);
  EXPECT_EQ(ChangeLabel(idle), "BUDGET-WARNING");
  idle.mutable_workspace()->mutable_event()->set_kind(v1::WorkspaceEvent::KIND_BUDGET_THRESHOLD);
  EXPECT_EQ(ChangeLabel(idle), "BUDGET-THRESHOLD");
  v1::WorkspaceChange left = Change(W::WHAT_STOPPED, "a", v1::WORKSPACE_STATE_STOPPED);
  left.set_left_filter(true);
  EXPECT_EQ(ChangeLabel(left), "STOPPED (left filter)");
}

TEST(WatchPrinter, TableListsAtSyncedThenARowPerChangeAndKeepsTheVersion) {
  using R = v1::WatchWorkspacesResponse;
  using W = v1::WorkspaceChange;
  Options options;
  WorkspaceWatchPrinter printer(options, 0);
  Capture out(std::cout);
  printer.Print(Message(R::KIND_EXISTING, 0,
                        {Change(W::WHAT_EXISTING, "ws-1", v1::WORKSPACE_STATE_PLACED)}));
  EXPECT_THAT(out.text(), IsEmpty());  // held until the listing is complete
  printer.Print(Message(R::KIND_SYNCED, 40));
  EXPECT_EQ(printer.version(), 40);
  printer.Print(Message(R::KIND_BOOKMARK, 41));
  EXPECT_EQ(printer.version(), 41);
  printer.Print(Message(R::KIND_CHANGES, 42,
                        {Change(W::WHAT_PENDING, "ws-2", v1::WORKSPACE_STATE_PENDING)}));
  EXPECT_EQ(printer.version(), 42);
  std::vector<std::string> lines = absl::StrSplit(out.text(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out.text();
  EXPECT_THAT(lines[0], StartsWith("CHANGE    ID    STATE"));
  EXPECT_THAT(lines[1], StartsWith("EXISTING  ws-1  PLACED  gpu-1x"));
  // A later, wider cell widens its column from then on (as kubectl get -w).
  EXPECT_THAT(lines[2], StartsWith("PENDING   ws-2  PENDING  gpu-1x"));
}

TEST(WatchPrinter, JsonPrintsEveryMessageOnALine) {
  using R = v1::WatchWorkspacesResponse;
  Options options;
  options.output = OutputFormat::kJson;
  WorkspaceWatchPrinter printer(options, 7);
  Capture out(std::cout);
  printer.Print(Message(R::KIND_BOOKMARK, 8));
  printer.Print(Message(
      R::KIND_CHANGES, 9,
      {Change(v1::WorkspaceChange::WHAT_PLACED, "ws-1", v1::WORKSPACE_STATE_PLACED)}));
  std::vector<std::string> lines = absl::StrSplit(out.text(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << out.text();
  EXPECT_THAT(lines[0], HasSubstr("\"kind\":\"KIND_BOOKMARK\""));
  EXPECT_THAT(lines[1], HasSubstr("\"what\":\"WHAT_PLACED\""));
  EXPECT_EQ(printer.version(), 9);
}

TEST(ResumeAdvice, TooSlowAndUnavailableResumeFromTheLastVersionSeen) {
  Options options = OptionsFor({"-w", "--pool=gpu-h100", "-o", "json"});
  std::string slow = ResumeAdvice(WithReason(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                             "WATCH_TOO_SLOW", {{"last_version", "42"}}),
                                  42, options);
  EXPECT_THAT(slow, HasSubstr("wschedctl get workspaces --watch --resume-version=42 "
                              "--pool=gpu-h100 -o json"));
  EXPECT_THAT(ResumeAdvice(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone"), 17, options),
              HasSubstr("--resume-version=17"));
  // No version reached yet: the same command lists again; nothing to add.
  EXPECT_THAT(ResumeAdvice(grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone"), 0, options),
              IsEmpty());
  EXPECT_THAT(ResumeAdvice(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no"), 17, options),
              IsEmpty());
}

TEST(ResumeAdvice, TooOldListsAgainWithoutResumeVersion) {
  std::string advice = ResumeAdvice(
      WithReason(grpc::StatusCode::OUT_OF_RANGE, "RESUME_TOO_OLD",
                 {{"resume_version", "3"}, {"oldest_version", "100"}}),
      3, OptionsFor({"-w", "--resume-version=3", "--state=pending"}));
  EXPECT_THAT(advice, HasSubstr("without --resume-version"));
  EXPECT_THAT(advice, HasSubstr("wschedctl get workspaces --watch --state=pending"));
  EXPECT_THAT(advice, Not(HasSubstr("--resume-version=")));
}

TEST(WatchCommandLine, QuotesOnlyWhatTheShellWouldSplit) {
  Options options;
  options.org = "acme corp";
  EXPECT_EQ(WatchCommandLine(options, 5),
            "wschedctl get workspaces --watch --resume-version=5 --org='acme corp'");
}

}  // namespace
}  // namespace wsched::cli
