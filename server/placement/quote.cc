#include "server/placement/quote.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "server/core/class_resolution.h"
#include "server/core/error_reason.h"
#include "server/core/mig.h"
#include "server/core/mig_profiles.h"
#include "server/placement/filters.h"

namespace wsched::placement {
namespace {

// Bumped if the layout changes, so an old token gets a clear error.
constexpr absl::string_view kTokenVersion = "q1";

// The codes under which capacity for the request is on its way, and how.
std::optional<QuoteWhen> LaterWhen(PendingCode code) {
  switch (code) {
    case PendingCode::kDriverInstalling:
      return QuoteWhen::kAfterDriverInstall;
    case PendingCode::kNodeProvisioning:
    case PendingCode::kPoolBackingOff:  // The scale-up follows the backoff.
    case PendingCode::kScaleUpRequested:
    case PendingCode::kScaleUpNotYetRequested:
      return QuoteWhen::kAfterScaleUp;
    default:
      return std::nullopt;
  }
}

std::string Figure(int64_t sevenths) { return core::GpuSeventhsFigure(sevenths); }

// "org o-1 holds 8 of 8 GPUs" when the class would take it past its quota.
std::optional<std::string> OverQuota(const std::string& org, int64_t held_sevenths,
                                     std::optional<int64_t> quota,
                                     const core::WorkspaceClass& cls) {
  if (!quota) return std::nullopt;
  const int64_t needs = core::LeastGpuSevenths(cls);
  if (needs == 0 || held_sevenths + needs <= *quota * core::kMigComputeSlices) return std::nullopt;
  return absl::StrCat("org ", org, " now holds ", Figure(held_sevenths), " of ", *quota,
                      " GPUs; class ", cls.id, " needs ", Figure(needs), " more");
}

// The pending walk for a request that is not queued yet, on `pools` only.
PendingReason WalkOn(const PendingContext& base, const core::WorkspaceClass& cls,
                     const std::vector<core::NodePool>& pools) {
  PendingContext ctx = base;
  ctx.cls = &cls;
  ctx.pools = &pools;
  ctx.queue_position = 0;
  ctx.quota.reset();
  ctx.policy_denial.reset();
  return ExplainPending(ctx);
}

std::string Describe(const Quote& q) {
  const std::string estimate =
      q.estimate
          ? absl::StrCat(" (about ",
                         absl::FormatDuration(absl::Trunc(*q.estimate, absl::Seconds(1))), ")")
          : "";
  std::string where;
  switch (q.when) {
    case QuoteWhen::kNow:
      where = absl::StrCat("now on node ", q.node, " of pool ", q.pool);
      break;
    case QuoteWhen::kAfterDriverInstall:
      where =
          absl::StrCat("after the driver install on node ", q.node, " of pool ", q.pool, estimate);
      break;
    case QuoteWhen::kAfterScaleUp:
      where = absl::StrCat("after a scale-up of pool ", q.pool, estimate);
      break;
  }
  return absl::StrCat("class ", q.class_id, " ", where);
}

class QuoteFinder {
 public:
  explicit QuoteFinder(const QuoteInputs& in) : in_(in) {}

  std::vector<Quote> Find() {
    for (const core::WorkspaceClass* cls : in_.classes) {
      if (cls == nullptr) continue;
      if (OverQuota("", in_.org_sevenths_held, in_.org_gpu_quota, *cls)) continue;
      QuoteClass(*cls);
    }
    // Stable: the resolved class's decision stays first among those now.
    std::stable_sort(found_.begin(), found_.end(), [](const Quote& a, const Quote& b) {
      const absl::Duration inf = absl::InfiniteDuration();
      return std::tuple(a.when != QuoteWhen::kNow, a.estimate.value_or(inf)) <
             std::tuple(b.when != QuoteWhen::kNow, b.estimate.value_or(inf));
    });
    return std::move(found_);
  }

 private:
  // The decision over all the class's pools first (the pool a plain
  // request would get), then each pool on its own.
  void QuoteClass(const core::WorkspaceClass& cls) {
    const std::vector<core::NodePool>& pools = *in_.pending.pools;
    std::string decided_pool;
    const Decision decision = Decide(cls, pools, *in_.pending.snapshot);
    if (auto* placed = std::get_if<Placed>(&decision)) {
      decided_pool = placed->pool;
      AddNow(cls, *placed);
    }
    for (const auto& tier : PlanPools(cls, pools).tiers) {
      for (const core::NodePool* pool : tier) {
        if (pool->id != decided_pool) QuotePool(cls, *pool);
      }
    }
  }

  void QuotePool(const core::WorkspaceClass& cls, const core::NodePool& pool) {
    const std::vector<core::NodePool> one = {pool};
    const Decision decision = Decide(cls, one, *in_.pending.snapshot);
    if (auto* placed = std::get_if<Placed>(&decision)) {
      AddNow(cls, *placed);
      return;
    }
    if (!std::holds_alternative<NotNow>(decision)) return;
    PendingReason reason = WalkOn(in_.pending, cls, one);
    std::optional<QuoteWhen> when = LaterWhen(reason.code);
    if (!when) return;  // Nothing on its way: a person must act (fixes.h).
    Quote q = Base(cls, pool.id);
    q.when = *when;
    if (*when == QuoteWhen::kAfterDriverInstall) q.node = reason.node;
    TimeToGpu estimate = Estimate(reason);
    q.estimate = estimate.estimate;
    q.estimate_basis = std::move(estimate.basis);
    Add(std::move(q));
  }

  void AddNow(const core::WorkspaceClass& cls, const Placed& placed) {
    Quote q = Base(cls, placed.pool);
    q.when = QuoteWhen::kNow;
    q.node = placed.node;
    Add(std::move(q));
  }

  Quote Base(const core::WorkspaceClass& cls, const std::string& pool_id) const {
    Quote q;
    q.class_id = cls.id;
    q.pool = pool_id;
    if (const core::NodePool* pool = core::FindPool(*in_.pending.pools, pool_id)) {
      q.gpu_model = pool->shape.gpu_model;
    }
    q.credits_per_minute_milli = cls.credits_per_minute_milli;
    q.gpus = cls.is_gpu() ? cls.gpu.count : 0;
    q.org_sevenths_held = in_.org_sevenths_held;
    q.org_sevenths_after = in_.org_sevenths_held + core::LeastGpuSevenths(cls);
    q.org_gpu_quota = in_.org_gpu_quota;
    return q;
  }

  void Add(Quote q) {
    q.detail = Describe(q);
    found_.push_back(std::move(q));
  }

  TimeToGpu Estimate(const PendingReason& reason) const {
    const PoolPicture picture{in_.pending.pools, in_.pending.snapshot, in_.pending.driver_policy};
    return EstimateTimeToGpu(EstimateInputs(reason, in_.times, picture, in_.pending.now));
  }

  const QuoteInputs& in_;
  std::vector<Quote> found_;
};

absl::Status BadToken(absl::string_view why) {
  return core::InvalidFieldError(
      "quote_token",
      absl::StrCat(why, "; pass the quote_token of a validate_only answer unchanged"));
}

// Reads "<length>:<bytes>" off the front of `rest`.
bool ReadField(absl::string_view& rest, std::string& out) {
  const size_t colon = rest.find(':');
  size_t length = 0;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, colon), &length) ||
      length > rest.size() - colon - 1) {
    return false;
  }
  out = std::string(rest.substr(colon + 1, length));
  rest.remove_prefix(colon + 1 + length);
  return true;
}

std::optional<QuoteWhen> WhenNamed(absl::string_view name) {
  for (QuoteWhen when :
       {QuoteWhen::kNow, QuoteWhen::kAfterDriverInstall, QuoteWhen::kAfterScaleUp}) {
    if (name == QuoteWhenName(when)) return when;
  }
  return std::nullopt;
}

// Why the quoted node cannot take the class now, for people.
std::string NodeChange(const std::string& name, const core::WorkspaceClass& cls,
                       const Snapshot& snapshot) {
  const SnapshotNode* node = snapshot.FindNode(name);
  if (node->state != core::NodeState::kReady) {
    return absl::StrCat("node ", name, " is ", core::NodeStateName(node->state));
  }
  return absl::StrCat("node ", name, " no longer has room for class ", cls.id);
}

}  // namespace

const char* QuoteWhenName(QuoteWhen when) {
  switch (when) {
    case QuoteWhen::kNow:
      return "now";
    case QuoteWhen::kAfterDriverInstall:
      return "after_driver_install";
    case QuoteWhen::kAfterScaleUp:
      return "after_scale_up";
  }
  return "unknown";
}

std::vector<std::string> ClassesToQuote(const core::WorkspaceClass& resolved,
                                        const std::vector<core::WorkspaceClass>& catalog,
                                        const core::ProjectSettings& project,
                                        const core::OrgSettings& org, int limit) {
  std::vector<const core::WorkspaceClass*> others;
  for (const core::WorkspaceClass& cls : catalog) {
    if (cls.id == resolved.id || cls.deprecated || cls.gpu.isolation != resolved.gpu.isolation ||
        cls.is_gpu() != resolved.is_gpu() || cls.is_slice() != resolved.is_slice() ||
        core::ForbiddingRule(cls.id, project, org)) {
      continue;
    }
    others.push_back(&cls);
  }
  auto distance = [&](const core::WorkspaceClass* cls) {
    return std::pair(std::abs(cls->gpu.count - resolved.gpu.count), cls->credits_per_minute_milli);
  };
  std::stable_sort(others.begin(), others.end(),
                   [&](const auto* a, const auto* b) { return distance(a) < distance(b); });
  std::vector<std::string> ids = {resolved.id};
  for (const core::WorkspaceClass* cls : others) {
    if (static_cast<int>(ids.size()) >= limit) break;
    ids.push_back(cls->id);
  }
  return ids;
}

std::vector<Quote> FindQuotes(const QuoteInputs& in) { return QuoteFinder(in).Find(); }

QuoteToken TokenOf(const Quote& quote, const std::string& workspace_id, const std::string& org_id,
                   const std::string& project_id, absl::Time now) {
  QuoteToken token;
  token.workspace_id = workspace_id;
  token.org_id = org_id;
  token.project_id = project_id;
  token.class_id = quote.class_id;
  token.pool = quote.pool;
  token.when = quote.when;
  token.node = quote.node;
  token.org_sevenths_held = quote.org_sevenths_held;
  token.expires = now + kQuoteLifetime;
  return token;
}

std::string EncodeQuoteToken(const QuoteToken& t) {
  std::string raw(kTokenVersion);
  for (const std::string& field :
       {t.workspace_id, t.org_id, t.project_id, t.class_id, t.pool,
        std::string(QuoteWhenName(t.when)), t.node, absl::StrCat(t.org_sevenths_held),
        absl::StrCat(absl::ToUnixSeconds(t.expires))}) {
    absl::StrAppend(&raw, field.size(), ":", field);
  }
  return absl::WebSafeBase64Escape(raw);
}

absl::StatusOr<QuoteToken> DecodeQuoteToken(const std::string& text) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(text, &raw)) return BadToken("not a quote token");
  absl::string_view rest = raw;
  if (!absl::ConsumePrefix(&rest, kTokenVersion)) return BadToken("not a quote token");
  std::string fields[9];
  for (std::string& field : fields) {
    if (!ReadField(rest, field)) return BadToken("not a quote token");
  }
  QuoteToken t;
  std::optional<QuoteWhen> when = WhenNamed(fields[5]);
  int64_t expires = 0;
  if (!rest.empty() || !when || !absl::SimpleAtoi(fields[7], &t.org_sevenths_held) ||
      !absl::SimpleAtoi(fields[8], &expires)) {
    return BadToken("not a quote token");
  }
  t.workspace_id = fields[0];
  t.org_id = fields[1];
  t.project_id = fields[2];
  t.class_id = fields[3];
  t.pool = fields[4];
  t.when = *when;
  t.node = fields[6];
  t.expires = absl::FromUnixSeconds(expires);
  return t;
}

std::optional<QuoteChange> CheckQuote(const QuoteToken& token, const QuoteCheckInputs& in) {
  if (in.now >= token.expires) {
    return QuoteChange{"expired",
                       absl::StrCat("the quote expired at ", absl::FormatTime(token.expires))};
  }
  if (token.workspace_id != in.workspace_id || token.org_id != in.org_id ||
      token.project_id != in.project_id ||
      (!in.requested_class.empty() && in.requested_class != token.class_id)) {
    return QuoteChange{
        "request", absl::StrCat("the quote was made for workspace ", token.workspace_id, " of org ",
                                token.org_id, ", project ", token.project_id, ", class ",
                                token.class_id, "; this request differs")};
  }
  if (in.cls == nullptr) {
    return QuoteChange{"class", absl::StrCat("class ", token.class_id, " is gone")};
  }
  const core::NodePool* pool = core::FindPool(*in.pending.pools, token.pool);
  if (pool == nullptr) return QuoteChange{"pool", absl::StrCat("pool ", token.pool, " is gone")};
  if (auto over = OverQuota(in.org_id, in.org_sevenths_held, in.org_gpu_quota, *in.cls)) {
    return QuoteChange{"quota", *over};
  }
  const Snapshot& snapshot = *in.pending.snapshot;
  if (token.when == QuoteWhen::kNow && snapshot.FindNode(token.node) == nullptr) {
    return QuoteChange{"node_gone", absl::StrCat("node ", token.node, " is gone")};
  }
  const Decision decision = DecideAsQuoted(token, *in.cls, *in.pending.pools, snapshot);
  if (auto* placed = std::get_if<Placed>(&decision)) {
    // Later quotes are kept by room now on the same pool: sooner, same price.
    if (token.when != QuoteWhen::kNow || placed->node == token.node) return std::nullopt;
    return QuoteChange{"node_full", NodeChange(token.node, *in.cls, snapshot)};
  }
  if (token.when == QuoteWhen::kNow) {
    return QuoteChange{"node_full", NodeChange(token.node, *in.cls, snapshot)};
  }
  const std::vector<core::NodePool> one = {*pool};
  const PendingReason reason = WalkOn(in.pending, *in.cls, one);
  if (LaterWhen(reason.code)) return std::nullopt;
  return QuoteChange{"when", absl::StrCat("pool ", token.pool, " has no capacity on its way for ",
                                          "class ", token.class_id, " any more: ", reason.detail)};
}

Decision DecideAsQuoted(const QuoteToken& token, const core::WorkspaceClass& cls,
                        const std::vector<core::NodePool>& pools, const Snapshot& snapshot) {
  const core::NodePool* pool = core::FindPool(pools, token.pool);
  if (pool == nullptr) return Never{absl::StrCat("pool ", token.pool, " is gone")};
  const std::vector<core::NodePool> one = {*pool};
  if (token.when != QuoteWhen::kNow) return Decide(cls, one, snapshot);
  return DecideAvoiding(cls, one, snapshot,
                        [&](const std::string& node) { return node != token.node; });
}

}  // namespace wsched::placement
