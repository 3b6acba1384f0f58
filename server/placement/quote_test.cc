#include "server/placement/quote.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/decide.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

// Class gpu-8x takes h100 before a100; pool gpu-h100 has nodes, pool
// gpu-a100 none yet (a scale-up brings one).
class QuoteTest : public ::testing::Test {
 protected:
  QuoteTest() {
    pools_ = {GpuPool("gpu-h100", "h100"), GpuPool("gpu-a100", "a100")};
    classes_ = {GpuClass("gpu-8x", 8, {"h100", "a100"}), GpuClass("gpu-4x", 4, {"h100"})};
    classes_[0].credits_per_minute_milli = 4000;
    classes_[1].credits_per_minute_milli = 2000;
  }

  void AddNode(const std::string& name, const std::string& pool = "gpu-h100",
               core::DriverState driver = core::DriverState::kReady) {
    ASSERT_TRUE(
        snapshot_.UpsertNode(FakeGpuNode(name, pool), core::NodeState::kReady, driver, kNow).ok());
  }

  // Holds the first `count` GPUs of `node` for another workspace.
  void Hold(const std::string& node, int count) {
    std::vector<int> gpus;
    for (int i = 0; i < count; ++i) gpus.push_back(i);
    ASSERT_TRUE(snapshot_.Hold("other-on-" + node, node, gpus, {}).ok());
  }

  PendingContext Pending() const {
    PendingContext ctx;
    ctx.pools = &pools_;
    ctx.snapshot = &snapshot_;
    ctx.driver_policy = &policy_;
    ctx.now = kNow;
    return ctx;
  }

  QuoteInputs Inputs() const {
    QuoteInputs in;
    in.pending = Pending();
    for (const core::WorkspaceClass& cls : classes_) in.classes.push_back(&cls);
    in.org_sevenths_held = held_;
    in.org_gpu_quota = quota_;
    return in;
  }

  QuoteCheckInputs Check(const QuoteToken& token) const {
    QuoteCheckInputs in;
    in.workspace_id = "w-1";
    in.org_id = "o-1";
    in.project_id = "p-1";
    for (const core::WorkspaceClass& cls : classes_) {
      if (cls.id == token.class_id) in.cls = &cls;
    }
    in.pending = Pending();
    in.org_sevenths_held = held_;
    in.org_gpu_quota = quota_;
    in.now = kNow + absl::Seconds(10);
    return in;
  }

  QuoteToken TokenFor(const Quote& quote) const {
    return TokenOf(quote, "w-1", "o-1", "p-1", kNow);
  }

  std::vector<core::NodePool> pools_;
  std::vector<core::WorkspaceClass> classes_;
  std::vector<core::DriverPolicyEntry> policy_;
  Snapshot snapshot_;
  int64_t held_ = 0;
  std::optional<int64_t> quota_;
};

TEST_F(QuoteTest, NowThenAfterScaleUpPerPoolAndClass) {
  AddNode("h1");
  std::vector<Quote> quotes = FindQuotes(Inputs());
  ASSERT_EQ(quotes.size(), 3u);
  EXPECT_EQ(quotes[0].class_id, "gpu-8x");
  EXPECT_EQ(quotes[0].when, QuoteWhen::kNow);
  EXPECT_EQ(quotes[0].node, "h1");
  EXPECT_EQ(quotes[0].gpu_model, "h100");
  EXPECT_EQ(quotes[0].credits_per_minute_milli, 4000);
  EXPECT_EQ(quotes[0].gpus, 8);
  EXPECT_EQ(quotes[1].class_id, "gpu-4x");
  EXPECT_EQ(quotes[1].when, QuoteWhen::kNow);
  EXPECT_EQ(quotes[2].class_id, "gpu-8x");
  EXPECT_EQ(quotes[2].pool, "gpu-a100");
  EXPECT_EQ(quotes[2].when, QuoteWhen::kAfterScaleUp);
  ASSERT_TRUE(quotes[2].estimate.has_value());
  EXPECT_EQ(*quotes[2].estimate, absl::Minutes(5));  // The default node start.
  EXPECT_THAT(quotes[2].estimate_basis, HasSubstr("default node start time"));
  EXPECT_THAT(quotes[2].detail, HasSubstr("after a scale-up of pool gpu-a100"));
}

TEST_F(QuoteTest, TheFirstIsWhatThePlacementDecides) {
  AddNode("h1");
  AddNode("h2");
  Hold("h2", 4);  // h2 has 4 GPUs free: the fuller node packs gpu-4x better.
  classes_.erase(classes_.begin());
  const Decision decision = Decide(classes_[0], pools_, snapshot_);
  auto* placed = std::get_if<Placed>(&decision);
  ASSERT_NE(placed, nullptr);
  std::vector<Quote> quotes = FindQuotes(Inputs());
  ASSERT_FALSE(quotes.empty());
  EXPECT_EQ(quotes[0].node, placed->node);
}

TEST_F(QuoteTest, UsesTheMeasuredNodeStart) {
  QuoteInputs in = Inputs();
  in.times.node_start["gpu-a100"] = MeasuredTime{absl::Minutes(3), 4};
  in.times.node_start["gpu-h100"] = MeasuredTime{absl::Minutes(2), 4};
  std::vector<Quote> quotes = FindQuotes(in);
  ASSERT_FALSE(quotes.empty());
  // No node anywhere: every quote waits for a scale-up, the quickest first.
  EXPECT_EQ(quotes[0].pool, "gpu-h100");
  EXPECT_EQ(quotes[0].when, QuoteWhen::kAfterScaleUp);
  EXPECT_EQ(quotes[0].estimate, absl::Minutes(2));
  EXPECT_THAT(quotes[0].estimate_basis, HasSubstr("4 samples"));
}

// A quote after a scale-up counts what the pending workspace's estimate
// would (estimate_inputs.h): the batching window, the node's boot and the
// driver install its new node runs, measured on the pool's kernel.
TEST_F(QuoteTest, AfterAScaleUpCountsTheNewNodesDriverInstallAndTheBatchingWindow) {
  policy_ = {{.kernel = "6.1.0-*-amd64",
              .os_id = "debian",
              .os_version = "12",
              .driver_version = "550.54.15",
              .driver_branch = "550",
              .installer_repo = "registry.example.com/nvidia/driver"}};
  QuoteInputs in = Inputs();
  in.times.node_start["gpu-a100"] = MeasuredTime{absl::Minutes(3), 4};
  in.times.driver_install[{"gpu-a100", "6.1.0-18-amd64"}] = MeasuredTime{absl::Minutes(2), 3};
  in.times.install_kernels["gpu-a100"] = {"6.1.0-18-amd64"};
  in.times.batching_window = absl::Seconds(2);
  const std::vector<Quote> quotes = FindQuotes(in);
  const Quote* a100 = nullptr;
  for (const Quote& quote : quotes) {
    if (quote.pool == "gpu-a100" && quote.class_id == "gpu-8x") a100 = &quote;
  }
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->when, QuoteWhen::kAfterScaleUp);
  EXPECT_EQ(a100->estimate, absl::Seconds(2) + absl::Minutes(3) + absl::Minutes(2));

  // Without a policy for its kernel, a new node installs nothing.
  policy_.clear();
  for (const Quote& quote : FindQuotes(in)) {
    if (quote.pool == "gpu-a100" && quote.class_id == "gpu-8x") {
      EXPECT_EQ(quote.estimate, absl::Seconds(2) + absl::Minutes(3));
    }
  }
}

TEST_F(QuoteTest, AfterTheDriverInstallOnTheInstallingNode) {
  AddNode("h1", "gpu-h100", core::DriverState::kInstalling);
  pools_[1].max_size = 0;  // No a100 can come.
  classes_.resize(1);
  std::vector<Quote> quotes = FindQuotes(Inputs());
  ASSERT_EQ(quotes.size(), 1u);
  EXPECT_EQ(quotes[0].when, QuoteWhen::kAfterDriverInstall);
  EXPECT_EQ(quotes[0].node, "h1");
  EXPECT_TRUE(quotes[0].estimate.has_value());
}

TEST_F(QuoteTest, NothingWhenNoCapacityIsOnItsWay) {
  pools_[0].max_size = 0;
  pools_[1].max_size = 0;
  EXPECT_THAT(FindQuotes(Inputs()), IsEmpty());
}

TEST_F(QuoteTest, LeavesOutClassesOverTheQuotaAndSaysWhatTheOthersDo) {
  AddNode("h1");
  held_ = 2 * 7;
  quota_ = 8;  // 2 + 8 > 8; 2 + 4 fits.
  std::vector<Quote> quotes = FindQuotes(Inputs());
  ASSERT_FALSE(quotes.empty());
  for (const Quote& q : quotes) EXPECT_EQ(q.class_id, "gpu-4x");
  EXPECT_EQ(quotes[0].org_sevenths_held, 14);
  EXPECT_EQ(quotes[0].org_sevenths_after, 6 * 7);
  EXPECT_EQ(quotes[0].org_gpu_quota, 8);
}

TEST_F(QuoteTest, TokenRoundTrips) {
  AddNode("h1");
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  EXPECT_EQ(token.expires, kNow + kQuoteLifetime);
  absl::StatusOr<QuoteToken> back = DecodeQuoteToken(EncodeQuoteToken(token));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, token);
}

TEST_F(QuoteTest, MalformedTokenNamesTheField) {
  for (const std::string& text :
       {std::string("not base64!"), std::string("eDE6YQ"), EncodeQuoteToken({}).substr(4)}) {
    absl::StatusOr<QuoteToken> token = DecodeQuoteToken(text);
    ASSERT_FALSE(token.ok()) << text;
    EXPECT_EQ(token.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(token.status().message(), HasSubstr("quote_token"));
  }
}

TEST_F(QuoteTest, AFreshQuoteHolds) {
  AddNode("h1");
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  EXPECT_EQ(CheckQuote(token, Check(token)), std::nullopt);
  const Decision decision = DecideAsQuoted(token, classes_[0], pools_, snapshot_);
  auto* placed = std::get_if<Placed>(&decision);
  ASSERT_NE(placed, nullptr);
  EXPECT_EQ(placed->node, "h1");
}

TEST_F(QuoteTest, TheQuotedNodeIsTakenBeforeABetterPackedOne) {
  AddNode("h1");
  AddNode("h2");
  classes_.erase(classes_.begin());  // gpu-4x.
  Quote on_h1;
  for (const Quote& q : FindQuotes(Inputs())) {
    if (q.node == "h1") on_h1 = q;
  }
  on_h1.class_id = "gpu-4x";
  on_h1.pool = "gpu-h100";
  on_h1.node = "h1";
  Hold("h2", 4);  // h2 now packs gpu-4x better.
  const Decision decision = DecideAsQuoted(TokenFor(on_h1), classes_[0], pools_, snapshot_);
  auto* placed = std::get_if<Placed>(&decision);
  ASSERT_NE(placed, nullptr);
  EXPECT_EQ(placed->node, "h1");
}

TEST_F(QuoteTest, StaleWhenTheNodeIsGone) {
  AddNode("h1");
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  snapshot_.RemoveNode("h1");
  EXPECT_EQ(CheckQuote(token, Check(token)), (QuoteChange{"node_gone", "node h1 is gone"}));
}

TEST_F(QuoteTest, StaleWhenTheNodeFilledUpOrWasCordoned) {
  AddNode("h1");
  AddNode("h2");
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  Hold(token.node, 1);
  std::optional<QuoteChange> change = CheckQuote(token, Check(token));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->change, "node_full");
  EXPECT_EQ(change->detail,
            absl::StrCat("node ", token.node, " no longer has room for class gpu-8x"));
  snapshot_.Release("other-on-" + token.node);
  ASSERT_TRUE(snapshot_.SetNodeState(token.node, core::NodeState::kCordoned).ok());
  change = CheckQuote(token, Check(token));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->detail, absl::StrCat("node ", token.node, " is cordoned"));
}

TEST_F(QuoteTest, StaleWhenTheOrgUsedItsQuota) {
  AddNode("h1");
  quota_ = 8;
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  held_ = 8 * 7;
  EXPECT_EQ(CheckQuote(token, Check(token)),
            (QuoteChange{"quota", "org o-1 now holds 8 of 8 GPUs; class gpu-8x needs 8 more"}));
}

TEST_F(QuoteTest, StaleWhenExpiredOrForAnotherRequest) {
  AddNode("h1");
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  QuoteCheckInputs late = Check(token);
  late.now = token.expires;
  EXPECT_EQ(CheckQuote(token, late)->change, "expired");
  QuoteCheckInputs other = Check(token);
  other.workspace_id = "w-2";
  EXPECT_EQ(CheckQuote(token, other)->change, "request");
  QuoteCheckInputs other_class = Check(token);
  other_class.requested_class = "gpu-4x";
  EXPECT_EQ(CheckQuote(token, other_class)->change, "request");
  QuoteCheckInputs gone = Check(token);
  gone.cls = nullptr;
  EXPECT_EQ(CheckQuote(token, gone)->change, "class");
}

TEST_F(QuoteTest, ALaterQuoteHoldsWhileCapacityIsOnItsWayOrRoomAppears) {
  classes_.resize(1);
  std::vector<Quote> quotes = FindQuotes(Inputs());
  ASSERT_FALSE(quotes.empty());
  QuoteToken token = TokenFor(quotes[0]);
  ASSERT_EQ(token.when, QuoteWhen::kAfterScaleUp);
  EXPECT_EQ(CheckQuote(token, Check(token)), std::nullopt);
  AddNode("n1", token.pool);  // Room now on the quoted pool: sooner, same price.
  EXPECT_EQ(CheckQuote(token, Check(token)), std::nullopt);
  snapshot_.RemoveNode("n1");
  for (core::NodePool& pool : pools_) pool.max_size = 0;
  std::optional<QuoteChange> change = CheckQuote(token, Check(token));
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->change, "when");
  EXPECT_THAT(change->detail, HasSubstr("max_size"));
}

TEST_F(QuoteTest, StaleWhenThePoolIsGone) {
  classes_.resize(1);
  QuoteToken token = TokenFor(FindQuotes(Inputs())[0]);
  pools_.erase(std::remove_if(pools_.begin(), pools_.end(),
                              [&](const core::NodePool& p) { return p.id == token.pool; }),
               pools_.end());
  EXPECT_EQ(CheckQuote(token, Check(token)),
            (QuoteChange{"pool", absl::StrCat("pool ", token.pool, " is gone")}));
}

TEST(ClassesToQuoteTest, TheResolvedFirstThenAllowedOnesOfItsKindNearestFirst) {
  std::vector<core::WorkspaceClass> catalog = {GpuClass("gpu-1x", 1),
                                               GpuClass("gpu-8x", 8),
                                               GpuClass("gpu-2x", 2),
                                               GpuClass("gpu-4x", 4),
                                               GpuClass("vm-4x", 4, {"h100"}, core::Isolation::kVm),
                                               testing::CpuClass("cpu"),
                                               GpuClass("old-4x", 4)};
  catalog[6].deprecated = true;
  core::ProjectSettings project;
  project.project_id = "p-1";
  core::OrgSettings org;
  org.org_id = "o-1";
  org.allowed_classes = {"gpu-1x", "gpu-2x", "gpu-4x", "vm-4x", "cpu", "old-4x"};
  EXPECT_THAT(ClassesToQuote(catalog[3], catalog, project, org),
              ::testing::ElementsAre("gpu-4x", "gpu-2x", "gpu-1x"));
  EXPECT_THAT(ClassesToQuote(catalog[3], catalog, project, org, 2),
              ::testing::ElementsAre("gpu-4x", "gpu-2x"));
}

}  // namespace
}  // namespace wsched::placement
