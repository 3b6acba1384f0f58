// Quotes: every way a PlaceWorkspace request could be served, before it is
// placed (docs/placement.md "Quotes").
//
// Per class the policies allow (the resolved class first, then the other
// classes of the same kind, as placement/fixes.h offers them), per pool
// the class may use: placed now (which node), after a scale-up of the pool
// or after a driver install on a node (with the time-to-GPU estimate of
// placement/time_to_gpu.h), its price and what it does to the org's GPU
// quota. Nothing here judges capacity anew: "now" is the placement
// decision (decide.h) run on the one pool, "later" is the pending walk
// (pending_reason.h) run on a copy of the inputs with only that pool.
//
// A quote token binds one quote: the request it was made for (workspace,
// org, project), the class, the pool, the node when quoted "now", the
// org's GPUs held when quoted, and an expiry. PlaceWorkspace with it
// checks it again (CheckQuote) and places only as quoted.
//
// Pure: no I/O, no clock reads, no locks.
#ifndef WSCHED_SERVER_PLACEMENT_QUOTE_H_
#define WSCHED_SERVER_PLACEMENT_QUOTE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/settings.h"
#include "server/core/workspace_class.h"
#include "server/placement/decide.h"
#include "server/placement/estimate_inputs.h"
#include "server/placement/pending_reason.h"
#include "server/placement/time_to_gpu.h"

namespace wsched::placement {

// Best first: room now beats capacity on its way.
enum class QuoteWhen { kNow, kAfterDriverInstall, kAfterScaleUp };

// "now", "after_driver_install", "after_scale_up" (stable: the token, logs).
const char* QuoteWhenName(QuoteWhen when);

// How long a token holds after it is issued: long enough to show a user
// the table and ask, short enough that the picture is still roughly true.
inline constexpr absl::Duration kQuoteLifetime = absl::Minutes(5);

struct Quote {
  std::string class_id;
  std::string pool;
  std::string gpu_model;  // The pool's; empty for a CPU pool.
  QuoteWhen when = QuoteWhen::kNow;
  std::string node;                        // kNow, kAfterDriverInstall.
  std::optional<absl::Duration> estimate;  // Unset for kNow or when none can be made.
  std::string estimate_basis;
  int64_t credits_per_minute_milli = 0;
  int gpus = 0;  // Whole GPUs taken (0 for a slice).
  // The org's GPUs in sevenths (a slice counts its share) now and after.
  int64_t org_sevenths_held = 0;
  int64_t org_sevenths_after = 0;
  std::optional<int64_t> org_gpu_quota;  // nullopt: unlimited.
  std::string detail;                    // One line for people.
  friend bool operator==(const Quote&, const Quote&) = default;
};

struct QuoteInputs {
  // As the pending walk takes it for a request not yet queued: pools,
  // snapshot, driver policy, scaling views, relayouts, now, and `ahead`
  // the whole queue. `cls` is ignored (`classes` says which) and so are
  // `quota` (`org_sevenths_held` and `org_gpu_quota` are judged here) and
  // `policy_denial` (`classes` holds only allowed classes).
  PendingContext pending;
  // Allowed classes to quote, the resolved class first.
  std::vector<const core::WorkspaceClass*> classes;
  int64_t org_sevenths_held = 0;
  std::optional<int64_t> org_gpu_quota;  // nullopt: unlimited.
  // What the pools measured: each way's estimate is made as a pending
  // workspace's is (estimate_inputs.h).
  MeasuredTimes times;
};

// The classes to quote: `resolved` first, then up to `limit` - 1 others
// of the same kind (whole GPUs, a slice, no GPU) and isolation, not
// deprecated, that the policies allow; the nearest GPU count, then the
// lower price, then catalog order.
std::vector<std::string> ClassesToQuote(const core::WorkspaceClass& resolved,
                                        const std::vector<core::WorkspaceClass>& catalog,
                                        const core::ProjectSettings& project,
                                        const core::OrgSettings& org, int limit = 8);

// Every way to serve the request, best first: the ones placed now (the
// resolved class's decision first), then the others by estimate; within
// those, class and pool order. Classes over the org's quota are left out.
// Cost: per class and pool one decision and at most one pending walk.
std::vector<Quote> FindQuotes(const QuoteInputs& in);

// What a token binds (docs/placement.md "Quotes").
struct QuoteToken {
  std::string workspace_id;
  std::string org_id;
  std::string project_id;
  std::string class_id;
  std::string pool;
  QuoteWhen when = QuoteWhen::kNow;
  std::string node;  // kNow: the node; kAfterDriverInstall: the node installing.
  int64_t org_sevenths_held = 0;
  absl::Time expires = absl::InfinitePast();
  friend bool operator==(const QuoteToken&, const QuoteToken&) = default;
};

QuoteToken TokenOf(const Quote& quote, const std::string& workspace_id, const std::string& org_id,
                   const std::string& project_id, absl::Time now);
// Opaque to callers: URL-safe base64 of the fields, length-prefixed.
std::string EncodeQuoteToken(const QuoteToken& token);
// INVALID_ARGUMENT "quote_token: ..." when it is not one EncodeQuoteToken made.
absl::StatusOr<QuoteToken> DecodeQuoteToken(const std::string& text);

// What makes a token stale: `change` is one of expired, request, class,
// pool, quota, node_gone, node_full, when.
struct QuoteChange {
  std::string change;
  std::string detail;  // "node g1 is gone", "org o-1 now holds 8 of 8 GPUs".
  friend bool operator==(const QuoteChange&, const QuoteChange&) = default;
};

struct QuoteCheckInputs {
  std::string workspace_id, org_id, project_id;
  std::string requested_class;  // Empty: none named.
  // The token's class, or null when the catalog has none any more.
  const core::WorkspaceClass* cls = nullptr;
  // The pending walk's inputs as for FindQuotes.
  PendingContext pending;
  int64_t org_sevenths_held = 0;
  std::optional<int64_t> org_gpu_quota;
  absl::Time now;
};

// nullopt when placing as `token` quoted is still possible: the request is
// the one quoted, the class and pool exist, the quota lets it in, and the
// quoted node has room (kNow) or the pool is still placed now or still
// waits on capacity on its way (later). Otherwise the first change found.
std::optional<QuoteChange> CheckQuote(const QuoteToken& token, const QuoteCheckInputs& in);

// The decision for a quoted request: on the token's pool only and, quoted
// now, on the token's node before any other.
Decision DecideAsQuoted(const QuoteToken& token, const core::WorkspaceClass& cls,
                        const std::vector<core::NodePool>& pools, const Snapshot& snapshot);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_QUOTE_H_
