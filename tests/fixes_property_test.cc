// What would let a pending workspace go, on generated states through the
// real server and PostgreSQL (docs/placement.md "What would it take"): each
// case builds a cluster through the API (catalog, fake agents' nodes,
// workspaces ahead in the queue, cordons, the org's quota and policies),
// then places the workspace under test. Every fix an admin is shown is then
// applied for real, each on its own copy of the case (built again under
// other names): a class through PlaceWorkspace, a node through
// UncordonNode, a quota through SetOrgSettings, a max_size through
// ApplyCatalog; the workspace is then placed, or the scale-up the fix
// promised is requested for it. The control plane is shown exactly the
// admin's fixes it may apply, in the same order; a project owner may not
// read the workspace at all.
//
// The cases run in lanes, each a server with a database of its own that
// takes one case at a time (as a lone server would: nothing of another
// case is pending beside it or offered to it): the time a case spends
// awaiting the server is spent by the other lanes' cases working.
//
// Seeded: case i is generated from seed kSeed + i, and a failure names its
// seed. Rerun one case alone with
//   WSCHED_FIXES_SEED=<seed> WSCHED_FIXES_CASES=1 build/bin/fixes_property_test
// (WSCHED_FIXES_LANES sets the number of lanes). A case is not independent
// of the cases run before it on its lane's server: seed 56 alone is placed
// at once, after seeds 36-55 on one server it waits.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/catalog_file.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/stream_reader.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::IsEmpty;

constexpr uint32_t kSeed = 36;
constexpr int kCases = 2000;
// How many times a copy of a case is built before it counts as different.
constexpr int kBuilds = 3;
// How many times a case whose copies differ from its first build starts
// over before that fails.
constexpr int kCaseAttempts = 2;
// Servers side by side; each case keeps one busy a few round trips at a
// time, so more lanes than cores still gain.
constexpr int kLanes = 8;

constexpr char kBaseCatalog[] = R"(classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 30Gi, disk: 50Gi}
    pool_selector: {workload: general}
    default: true
)";
constexpr char kBasePools[] = R"(pools:
  - id: general
    labels: {workload: general}
    node: {cpu: 30, memory: 120Gi, ephemeral_storage: 300Gi, disk: 1Ti}
    max_size: 4
)";
constexpr char kDriverPolicy[] = R"(driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";

uint32_t EnvOr(const char* name, uint32_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? static_cast<uint32_t>(std::strtoul(value, nullptr, 10)) : fallback;
}

// One generated case, without names: built as often as it has fixes, each
// time under its own prefix.
struct CaseSpec {
  struct Pool {
    std::string model;
    int gpus = 8;
    int max_size = 1;
    std::vector<bool> installing;  // Per node: registered before its driver is.
  };
  struct Class {
    int gpus = 1;
    std::vector<std::string> models;
    int price_milli = 1000;
  };
  std::vector<Pool> pools;
  std::vector<Class> classes;
  std::vector<int> queue;     // Classes placed before the workspace: held, or ahead.
  std::vector<int> cordoned;  // Node numbers (in registration order), after the queue.
  int64_t gpu_quota = -1;     // -1: none.
  std::vector<int> allowed;   // The org's allow-list; empty: all.
  std::vector<int> denied;    // The project's deny-list.
  int target = 0;             // The class of the workspace under test.
};

// 1-2 pools of 4- or 8-GPU nodes (H100, A100) with a max_size of 1-3 and
// 0-3 nodes (a few still installing their driver); 2-4 classes of 1-8 GPUs;
// 0-5 workspaces placed first (held or queued ahead); cordons; maybe a
// quota, an allow-list, a deny-list (never of the class under test, which
// would be refused, not queued).
CaseSpec Generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char* models[] = {"H100", "A100"};
  CaseSpec spec;
  int nodes = 0;
  for (int p = 0, count = 1 + pick(2); p < count; ++p) {
    CaseSpec::Pool pool{models[pick(2)], pick(2) == 0 ? 4 : 8, 1 + pick(3), {}};
    for (int n = 0, c = pick(4); n < c; ++n) pool.installing.push_back(pick(8) == 0);
    nodes += static_cast<int>(pool.installing.size());
    spec.pools.push_back(pool);
  }
  // Each class fits a pool of the case (the catalog refuses one that fits
  // none): its first model is that pool's, its count at most its GPUs.
  const int gpus[] = {1, 2, 4, 8};
  for (int c = 0, count = 2 + pick(3); c < count; ++c) {
    const CaseSpec::Pool& pool = spec.pools[pick(static_cast<int>(spec.pools.size()))];
    CaseSpec::Class cls{gpus[pick(pool.gpus == 8 ? 4 : 3)], {pool.model}, 250 * (1 + pick(8))};
    const std::string other = pool.model == models[0] ? models[1] : models[0];
    if (pick(3) == 0) cls.models.push_back(other);
    spec.classes.push_back(cls);
  }
  const int classes = static_cast<int>(spec.classes.size());
  for (int i = 0, count = pick(6); i < count; ++i) spec.queue.push_back(pick(classes));
  for (int n = 0; n < nodes; ++n) {
    if (pick(4) == 0) spec.cordoned.push_back(n);
  }
  spec.target = pick(classes);
  if (pick(2) == 0) spec.gpu_quota = pick(16);
  if (pick(4) == 0) spec.allowed = {spec.target, pick(classes)};
  for (int c = 0; c < classes; ++c) {
    if (c != spec.target && pick(4) == 0) spec.denied.push_back(c);
  }
  return spec;
}

// What one build of a case is called.
struct Names {
  std::string prefix;
  std::string Pool(int p) const { return absl::StrCat(prefix, "-pool", p); }
  std::string Class(int c) const { return absl::StrCat(prefix, "-c", c); }
  std::string Node(int p, int n) const { return absl::StrCat(prefix, "-pool", p, "-n", n); }
  std::string Queued(int i) const { return absl::StrCat(prefix, "-q", i); }
  std::string Target() const { return absl::StrCat(prefix, "-w"); }
};

bool IsScaleUp(v1::PendingReasonCode code) {
  return code == v1::PENDING_REASON_CODE_SCALE_UP_REQUESTED ||
         code == v1::PENDING_REASON_CODE_SCALE_UP_NOT_YET_REQUESTED;
}

// A fix without the case's names, to compare two builds of one case. A
// scale-up is "requested" once the scaler's next signal has asked for it,
// which one build may have seen and the other not yet.
std::string Shape(const v1::PendingFix& fix, const Names& names) {
  auto strip = [&](const std::string& s) {
    return s.rfind(names.prefix, 0) == 0 ? s.substr(names.prefix.size()) : s;
  };
  return absl::StrCat(v1::PendingFix::Kind_Name(fix.kind()), " ", strip(fix.class_id()), " ",
                      strip(fix.node()), " ", strip(fix.pool()), " ", fix.max_size(), " ",
                      fix.gpu_quota(), " ",
                      IsScaleUp(fix.outcome()) ? std::string("SCALE_UP")
                                               : v1::PendingReasonCode_Name(fix.outcome()));
}

struct Tally {
  int refused = 0;
  int placed = 0;
  int without = 0;
  int applied = 0;
  int built_again = 0;  // Copies of a case that came out different.
  int started_over = 0;  // Cases started over from a new first build.
  // Scale-ups promised of one pool, started there, whose workspace now
  // waits for another pool's requested node.
  int waits_elsewhere = 0;
  std::map<v1::PendingFix::Kind, int> kinds;

  void Add(const Tally& other) {
    built_again += other.built_again;
    started_over += other.started_over;
    waits_elsewhere += other.waits_elsewhere;
    refused += other.refused;
    placed += other.placed;
    without += other.without;
    applied += other.applied;
    for (const auto& [kind, count] : other.kinds) kinds[kind] += count;
  }
};

// One server and its database, taking one case at a time.
class Lane {
 public:
  explicit Lane(const std::string& catalog_path) {
    testing::ServerConfig config{db_.url(), catalog_path};
    // A lane lives for the whole run, and no agent sends heartbeats: the
    // nodes of the cases must not be called lost meanwhile.
    config.extra_flags = {"--scaling_batching_window=100ms", "--node_lost_after=1h"};
    server_ = std::make_unique<testing::ServerProcess>(config);
    if (!server_->started()) return;
    placement_ = v1::PlacementService::NewStub(server_->channel());
    inventory_ = v1::InventoryService::NewStub(server_->channel());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    classes_ = v1::ClassService::NewStub(server_->channel());
    scaling_ = v1::ScalingService::NewStub(server_->channel());
  }

  bool started() const { return server_->started(); }
  const Tally& tally() const { return tally_; }

  // Builds the case again for each fix after the first, applies it there,
  // and awaits what it promised.
  void CheckCase(uint32_t seed);
  // One attempt at a case from its first build `first`: nullopt when it is
  // checked (failures recorded), else how a copy kept differing from it.
  std::optional<std::string> CheckBuilds(const CaseSpec& spec, const Names& first);

 private:
  // The catalog holds the build under way (and the base): the builds before
  // it are gone (their workspaces stopped), so it stays small and nothing of
  // theirs is offered.
  void ApplyCatalog() {
    std::string yaml = kBaseCatalog;
    for (const auto& [id, text] : catalog_classes_) yaml += text;
    yaml += kBasePools;
    for (const auto& [id, text] : catalog_pools_) yaml += text;
    yaml += kDriverPolicy;
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ApplyCatalogRequest request;
    request.set_yaml(yaml);
    v1::ApplyCatalogResponse response;
    grpc::Status status = classes_->ApplyCatalog(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void SetPool(const Names& names, int p, const CaseSpec::Pool& pool, int max_size) {
    catalog_pools_[names.Pool(p)] = absl::StrCat(
        "  - id: ", names.Pool(p), "\n    labels: {case: ", names.prefix, "}\n",
        "    node: {cpu: 200, memory: 1700Gi, ephemeral_storage: 3Ti, disk: 4Ti, gpus: ", pool.gpus,
        ", gpu_model: ", pool.model, "}\n    max_size: ", max_size, "\n");
  }

  void AddClass(const Names& names, int c, const CaseSpec::Class& cls) {
    catalog_classes_[names.Class(c)] = absl::StrCat(
        "  - id: ", names.Class(c), "\n    display_name: ", names.Class(c),
        "\n    resources: {cpu: 4, memory: 16Gi, ephemeral_storage: 100Gi, disk: 200Gi}\n",
        "    gpu: {count: ", cls.gpus, ", models: [", absl::StrJoin(cls.models, ", "),
        "], isolation: container}\n    pool_selector: {case: ", names.prefix, "}\n",
        "    credits_per_minute: ", cls.price_milli / 1000.0, "\n");
  }

  // The org's quota and the case's allow-list (none before the queue is
  // placed: the workspaces ahead may be of classes it leaves out).
  void SetOrg(const Names& names, const CaseSpec& spec, int64_t gpu_quota, bool allow_list) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    for (int c : allow_list ? spec.allowed : std::vector<int>{}) {
      request.mutable_settings()->add_allowed_classes(names.Class(c));
    }
    request.mutable_settings()->set_gpu_quota(gpu_quota);
    v1::OrgSettings response;
    grpc::Status status = settings_->SetOrgSettings(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void SetProject(const Names& names, const std::vector<int>& denied) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetProjectSettingsRequest request;
    request.mutable_settings()->set_project_id("p-1");
    request.mutable_settings()->set_org_id("o-1");
    for (int c : denied) request.mutable_settings()->add_denied_classes(names.Class(c));
    v1::ProjectSettings response;
    grpc::Status status = settings_->SetProjectSettings(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  grpc::Status Node(const std::string& name, bool cordon) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::NodeNameRequest request;
    request.set_node_name(name);
    v1::Node node;
    return cordon ? inventory_->CordonNode(&context, request, &node)
                  : inventory_->UncordonNode(&context, request, &node);
  }

  // Places `id` as the control plane does; a class no pool of the catalog
  // can hold is refused, which a generated case may ask for.
  grpc::Status Place(const std::string& id, const std::string& class_id, v1::Workspace* out) {
    grpc::Status status = testing::PlaceAs(server_->channel(), id, class_id, out);
    if (status.ok()) placed_.push_back(id);
    return status;
  }

  // The one read of a workspace as `token` sees it (with its fixes: the
  // FULL view).
  grpc::Status GetWorkspace(const char* token, const std::string& id, v1::Workspace* out) {
    grpc::ClientContext context;
    testing::Authorize(context, token);
    v1::GetWorkspaceRequest request;
    request.set_workspace_id(id);
    request.set_view(v1::WORKSPACE_VIEW_FULL);
    return placement_->GetWorkspace(&context, request, out);
  }

  v1::Workspace Get(const char* token, const std::string& id) {
    v1::Workspace w;
    grpc::Status status = GetWorkspace(token, id, &w);
    EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
    return w;
  }

  // Builds `spec` under `names`; returns the workspace under test as
  // placed, or nothing when its class fits no pool (refused).
  std::optional<v1::Workspace> Build(const CaseSpec& spec, const Names& names) {
    std::vector<std::string> nodes;
    // The build before is gone from the catalog, or its classes would be
    // offered (their pools have room again) and the builds would not stay
    // apart.
    catalog_classes_.clear();
    catalog_pools_.clear();
    for (size_t p = 0; p < spec.pools.size(); ++p) {
      SetPool(names, p, spec.pools[p], spec.pools[p].max_size);
    }
    for (size_t c = 0; c < spec.classes.size(); ++c) AddClass(names, c, spec.classes[c]);
    ApplyCatalog();
    for (size_t p = 0; p < spec.pools.size(); ++p) {
      const CaseSpec::Pool& pool = spec.pools[p];
      for (size_t n = 0; n < pool.installing.size(); ++n) {
        testing::FakeNodeOptions options;
        options.model = pool.model;
        options.gpus = pool.gpus;
        v1::NodeInfo node = testing::FakeGpuNode(names.Node(p, n), names.Pool(p), options);
        if (pool.installing[n]) node.set_driver_version("");
        testing::RegisterNode(server_->channel(), node);
        nodes.push_back(node.name());
      }
    }
    // The settings of the case are set after the queue: a class they leave
    // out is not refused, it waits (CLASS_POLICY) and takes nothing.
    SetOrg(names, spec, -1, /*allow_list=*/false);
    SetProject(names, {});
    for (size_t i = 0; i < spec.queue.size(); ++i) {
      v1::Workspace ignored;
      (void)Place(names.Queued(i), names.Class(spec.queue[i]), &ignored);
    }
    for (int n : spec.cordoned) {
      grpc::Status status = Node(nodes[n], /*cordon=*/true);
      EXPECT_TRUE(status.ok()) << status.error_message();
    }
    SetOrg(names, spec, -1, /*allow_list=*/true);
    SetProject(names, spec.denied);
    v1::Workspace target;
    if (!Place(names.Target(), names.Class(spec.target), &target).ok()) return std::nullopt;
    // The quota after: a request over it is refused, one queued before it
    // was lowered waits (ORG_GPU_QUOTA).
    if (spec.gpu_quota >= 0) SetOrg(names, spec, spec.gpu_quota, /*allow_list=*/true);
    return target;
  }

  void StopAll() {
    for (const std::string& id : placed_) {
      v1::Workspace stopped;
      grpc::Status status = testing::StopAs(server_->channel(), id, &stopped);
      EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
    }
    placed_.clear();
  }

  // Follows the workspace's watch stream until `done` holds (each message
  // is a change; no polling); false when 30 s pass first. The bound is
  // only reached on a failure: the scaling loop runs below the serving
  // threads' CPU priority, and eight lanes can keep it from a core for
  // seconds, which is what the priority is for.
  bool Await(const std::string& id, const std::function<bool(const v1::Workspace&)>& done,
             v1::Workspace* last) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kControlPlaneToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    auto stream = placement_->WatchWorkspace(&context, request);
    return testing::ReadUntil(context, *stream, done, last);
  }

  // The pool's scaling target now; 0 while it has no signal.
  int TargetOf(const std::string& pool) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::ScalingState state;
    grpc::Status status = scaling_->GetScalingState(&context, {}, &state);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const v1::PoolSignal& signal : state.pools()) {
      if (signal.pool() == pool) return signal.target_size();
    }
    return 0;
  }

  // Follows the pool's signals until its target exceeds `before`; false
  // when 30 s pass first.
  bool AwaitTargetAbove(const std::string& pool, int before) {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::WatchScalingSignalsRequest request;
    request.add_pools(pool);
    auto stream = scaling_->WatchScalingSignals(&context, request);
    v1::PoolSignal signal;
    return testing::ReadUntil(
        context, *stream, [&](const v1::PoolSignal& s) { return s.target_size() > before; },
        &signal);
  }

  // What the fix promised: placed, or (a scale-up) a scale-up requested for
  // it, of the pool its outcome names when it names one. The scaler splits
  // a class's demand over its pools by what each holds, and the pending
  // walk hands the queue the nodes requested, in its order: a workspace
  // can come to wait for a node another pool had requested already, while
  // the promised pool scales up for the one ahead of it. That keeps the
  // promise (the scale-up it named was started, and one waits for it), so
  // it is checked as such, and counted.
  bool AwaitOutcome(const std::string& id, const v1::PendingFix& fix, int target_before,
                    v1::Workspace* last) {
    const bool scale_up = fix.outcome() != v1::PENDING_REASON_CODE_QUEUED;
    const bool went = Await(
        id,
        [&](const v1::Workspace& w) {
          return w.state() == v1::WORKSPACE_STATE_PLACED ||
                 (scale_up && w.pending().code() == v1::PENDING_REASON_CODE_SCALE_UP_REQUESTED);
        },
        last);
    if (!went || last->state() == v1::WORKSPACE_STATE_PLACED) return went;
    if (fix.outcome_pool().empty() || last->pending().pool() == fix.outcome_pool()) return true;
    ++tally_.waits_elsewhere;
    return AwaitTargetAbove(fix.outcome_pool(), target_before);
  }

  // Applies `fix` to the build `names` of `spec` through the API, as the
  // one it names would; returns the workspace that must now go.
  std::string Apply(const CaseSpec& spec, const Names& names, const v1::PendingFix& fix) {
    switch (fix.kind()) {
      case v1::PendingFix::KIND_USE_CLASS: {
        v1::Workspace stopped;
        EXPECT_TRUE(testing::StopAs(server_->channel(), names.Target(), &stopped).ok());
        const std::string id = absl::StrCat(names.Target(), "-as-", fix.class_id());
        v1::Workspace placed;
        grpc::Status status = Place(id, fix.class_id(), &placed);
        EXPECT_TRUE(status.ok()) << status.error_message();
        return id;
      }
      case v1::PendingFix::KIND_UNCORDON_NODE: {
        grpc::Status status = Node(fix.node(), /*cordon=*/false);
        EXPECT_TRUE(status.ok()) << status.error_message();
        break;
      }
      case v1::PendingFix::KIND_RAISE_ORG_GPU_QUOTA:
        SetOrg(names, spec, fix.gpu_quota(), /*allow_list=*/true);
        break;
      case v1::PendingFix::KIND_RAISE_POOL_MAX_SIZE:
        for (size_t p = 0; p < spec.pools.size(); ++p) {
          if (names.Pool(p) == fix.pool()) SetPool(names, p, spec.pools[p], fix.max_size());
        }
        ApplyCatalog();
        break;
      default:
        ADD_FAILURE() << "nothing to apply for " << fix.detail();
    }
    return names.Target();
  }

  // Who sees what: the control plane exactly the admin's fixes that the
  // project's side may apply, in order; a project owner cannot read it.
  // Compared by shape, not wording: a wait's words follow the reason now,
  // and the scaler may ask for a node between the two reads.
  void ExpectRoleFilter(const Names& names, const v1::Workspace& admin_view) {
    std::vector<std::string> expected;
    for (const v1::PendingFix& fix : admin_view.fixes()) {
      if (fix.applier() == v1::PendingFix::APPLIER_PROJECT_OWNER) {
        expected.push_back(Shape(fix, names));
      }
    }
    std::vector<std::string> shown;
    const std::string id = names.Target();
    const v1::Workspace control_plane_view = Get(testing::kControlPlaneToken, id);
    for (const v1::PendingFix& fix : control_plane_view.fixes()) {
      EXPECT_EQ(fix.applier(), v1::PendingFix::APPLIER_PROJECT_OWNER) << fix.detail();
      shown.push_back(Shape(fix, names));
    }
    EXPECT_EQ(shown, expected);
    v1::Workspace owner_view;
    EXPECT_EQ(GetWorkspace(testing::kOwnerToken, id, &owner_view).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(owner_view.fixes(), IsEmpty());
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::PlacementService::Stub> placement_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
  std::unique_ptr<v1::ClassService::Stub> classes_;
  std::unique_ptr<v1::ScalingService::Stub> scaling_;
  std::map<std::string, std::string> catalog_pools_;
  std::map<std::string, std::string> catalog_classes_;
  std::vector<std::string> placed_;
  Tally tally_;
};

void Lane::CheckCase(uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const CaseSpec spec = Generate(seed);
  // A first build that raced the server's own work shows fixes its copies
  // never show again: the case starts over from a new first build.
  std::string differs;
  for (int attempt = 1; attempt <= kCaseAttempts; ++attempt) {
    const Names first{attempt == 1 ? absl::StrCat("s", seed) : absl::StrCat("s", seed, "a", attempt)};
    std::optional<std::string> outcome = CheckBuilds(spec, first);
    if (!outcome) return;
    differs = *std::move(outcome);
    ++tally_.started_over;
  }
  ADD_FAILURE() << "the case, started " << kCaseAttempts
                << " times, kept showing other fixes on its copies; the last: " << differs;
}

std::optional<std::string> Lane::CheckBuilds(const CaseSpec& spec, const Names& first) {
  const std::optional<v1::Workspace> placed = Build(spec, first);
  if (!placed) {
    ++tally_.refused;
    StopAll();
    return std::nullopt;
  }
  if (placed->state() == v1::WORKSPACE_STATE_PLACED) {
    ++tally_.placed;
    EXPECT_THAT(Get(testing::kAdminToken, first.Target()).fixes(), IsEmpty());
    StopAll();
    return std::nullopt;
  }
  const v1::Workspace admin_view = Get(testing::kAdminToken, first.Target());
  EXPECT_EQ(admin_view.state(), v1::WORKSPACE_STATE_PENDING);
  ExpectRoleFilter(first, admin_view);
  std::vector<std::string> shapes;
  for (const v1::PendingFix& fix : admin_view.fixes()) shapes.push_back(Shape(fix, first));
  if (shapes.empty()) ++tally_.without;
  for (int j = 0; j < admin_view.fixes_size(); ++j) {
    SCOPED_TRACE(absl::StrCat("fix ", j, ": ", admin_view.fixes(j).detail()));
    Names names = first;
    v1::PendingFix fix = admin_view.fixes(j);
    if (j > 0) {  // A fresh copy of the case: the first build was changed.
      // A build races the server's own work (the queue's drain, the
      // scaler's ticks) under the load of the other lanes: one that comes
      // out different is built again, a few times at most, and counted.
      v1::Workspace again;
      std::vector<std::string> again_shapes;
      for (int build = 1; build <= kBuilds; ++build) {
        StopAll();
        names.prefix = absl::StrCat(first.prefix, "r", j, build > 1 ? absl::StrCat("b", build) : "");
        if (!Build(spec, names).has_value()) {
          ADD_FAILURE() << "a copy of the case was refused";
          StopAll();
          return std::nullopt;
        }
        again = Get(testing::kAdminToken, names.Target());
        again_shapes.clear();
        for (const v1::PendingFix& f : again.fixes()) again_shapes.push_back(Shape(f, names));
        if (again_shapes == shapes) break;
        ++tally_.built_again;
      }
      if (again_shapes != shapes) {
        StopAll();
        return absl::StrCat("first build: ", absl::StrJoin(shapes, "; "), "; its copies: ",
                            absl::StrJoin(again_shapes, "; "));
      }
      fix = again.fixes(j);
    }
    ++tally_.kinds[fix.kind()];
    if (fix.kind() == v1::PendingFix::KIND_WAIT) {
      // Nothing to apply: the reason now is what it waits for (a scale-up
      // may have been requested since).
      const v1::PendingReasonCode now = Get(testing::kAdminToken, names.Target()).pending().code();
      EXPECT_TRUE(now == fix.wait_for() || (IsScaleUp(now) && IsScaleUp(fix.wait_for())))
          << v1::PendingReasonCode_Name(now);
      continue;
    }
    const int target_before = fix.outcome_pool().empty() ? 0 : TargetOf(fix.outcome_pool());
    const std::string id = Apply(spec, names, fix);
    v1::Workspace last;
    EXPECT_TRUE(AwaitOutcome(id, fix, target_before, &last))
        << "promised " << v1::PendingReasonCode_Name(fix.outcome()) << " of pool "
        << fix.outcome_pool()
        << "; last: " << v1::WorkspaceState_Name(last.state()) << " "
        << v1::PendingReasonCode_Name(last.pending().code()) << " of pool " << last.pending().pool()
        << ": " << last.pending_reason();
    ++tally_.applied;
  }
  StopAll();
  return std::nullopt;
}

TEST(FixesPropertyTest, EveryFixShownAppliedThroughTheApiLetsTheWorkspaceGo) {
  const uint32_t seed = EnvOr("WSCHED_FIXES_SEED", kSeed);
  const int cases = static_cast<int>(EnvOr("WSCHED_FIXES_CASES", kCases));
  const testing::CatalogFile catalog("fixes-property",
                                     std::string(kBaseCatalog) + kBasePools + kDriverPolicy);
  const int lane_count = std::min(static_cast<int>(EnvOr("WSCHED_FIXES_LANES", kLanes)), cases);
  std::vector<std::unique_ptr<Lane>> lanes;
  for (int l = 0; l < lane_count; ++l) {
    lanes.push_back(std::make_unique<Lane>(catalog.path()));
    ASSERT_TRUE(lanes.back()->started());
  }
  // Lane l takes cases l, l + kLanes, ...; after a failure every lane stops
  // at its next case, and the seeds that failed are named.
  absl::Mutex mu;
  std::vector<uint32_t> failed_seeds;
  std::vector<std::thread> threads;
  for (size_t l = 0; l < lanes.size(); ++l) {
    threads.emplace_back([&, l] {
      for (size_t i = l; i < static_cast<size_t>(cases); i += lanes.size()) {
        if (::testing::Test::HasFailure()) return;
        lanes[l]->CheckCase(seed + i);
        if (::testing::Test::HasFailure()) {
          absl::MutexLock lock(&mu);
          failed_seeds.push_back(seed + i);
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (uint32_t failed : failed_seeds) {
    ADD_FAILURE() << "a failure above may be seed " << failed
                  << ": rerun with WSCHED_FIXES_SEED=" << failed << " WSCHED_FIXES_CASES=1";
  }
  if (!failed_seeds.empty()) return;
  Tally tally;
  for (const auto& lane : lanes) tally.Add(lane->tally());
  std::string kinds;
  for (const auto& [kind, count] : tally.kinds) {
    absl::StrAppend(&kinds, " ", v1::PendingFix::Kind_Name(kind), "=", count);
  }
  std::cout << cases << " cases in " << lanes.size() << " lanes: " << tally.refused
            << " refused (no pool fits), " << tally.placed << " placed at once, " << tally.without
            << " pending without a fix, " << tally.applied << " fixes applied ("
            << tally.built_again << " copies built again, " << tally.started_over
            << " cases started over, " << tally.waits_elsewhere
            << " waiting for another pool's requested node while the promised one scaled up);"
            << kinds << "\n";
  if (cases < kCases) return;
  // The generator reaches several kinds that an API call applies.
  int kinds_applied = 0;
  for (const auto& [kind, count] : tally.kinds) kinds_applied += kind != v1::PendingFix::KIND_WAIT;
  EXPECT_GE(kinds_applied, 3);
}

}  // namespace
}  // namespace wsched
