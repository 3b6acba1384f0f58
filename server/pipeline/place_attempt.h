// PlaceWorkspace: one attempt, and the small bounded driver that runs it
// (as Nomad's scheduler runs `process` under `retryMax`).
//
// An attempt reads what must be exact (the workspace's record, settings,
// quota), resolves the class, decides and commits through the steps every
// placement shares (decision_commit.h), and returns what happens next: an
// answer, or another attempt after catching up with the feed. A negative
// answer (refusal, queueing) is given only on state confirmed against the
// database: the attempt asks to catch up first and decides again. No state
// of its own beyond one call's progress.
#ifndef WSCHED_SERVER_PIPELINE_PLACE_ATTEMPT_H_
#define WSCHED_SERVER_PIPELINE_PLACE_ATTEMPT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/clock.h"
#include "server/metrics/metrics.h"
#include "server/pipeline/decision_commit.h"
#include "server/pipeline/estimate_checks.h"
#include "server/pipeline/settings_reader.h"
#include "server/pipeline/workspace_stops.h"
#include "server/pipeline/workspace_views.h"
#include "server/placement/quote.h"
#include "server/replica/feed_follower.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/stores.h"
#include "server/replica/watch_hub.h"

namespace wsched::pipeline {

class PlaceAttempts {
 public:
  struct Parts {
    replica::PlacementStore* store = nullptr;
    replica::ReplicaMirror* mirror = nullptr;
    replica::FeedFollower* follower = nullptr;  // Catching up: what other replicas committed.
    replica::WatchHub* watches = nullptr;       // Waiting for another request for the same id.
    SettingsReader* settings = nullptr;
    WorkspaceViews* views = nullptr;
    DecisionCommit* commit = nullptr;
    WorkspaceStops* stops = nullptr;
    metrics::Metrics* metrics = nullptr;
    EstimateChecks* estimates = nullptr;  // Records the estimate a queued workspace is given.
  };
  // `max_attempts`: decide + commit rounds before giving up on races.
  PlaceAttempts(Parts parts, int max_attempts, core::Clock clock)
      : parts_(parts), max_attempts_(max_attempts), clock_(std::move(clock)) {}

  // Places the workspace, queues it, or says why not; the same id answers
  // with the same placement (or queue slot).
  // A quoted request (quote_token) is placed only as quoted, or refused
  // QUOTE_STALE; validate_only answers Quote's.
  absl::StatusOr<WorkspaceView> Place(const replica::PlaceRequest& request);
  // validate_only: every way the request could be served, each with its
  // token, and nothing written. Errors as Place would give them (class
  // resolution, the org's quota, a class no pool can hold).
  absl::StatusOr<WorkspaceView> Quote(const replica::PlaceRequest& request);

 private:
  // What the call carries from one attempt to the next.
  struct Progress {
    bool read = false;       // Read the inputs from the database, not memory.
    bool confirmed = false;  // Caught up with the feed: negative answers may stand.
    std::string class_label = "unresolved";  // For the placement metric.
    std::optional<placement::QuoteToken> quoted;  // The request's quote, if any.
  };
  // The call ends with this answer (`outcome` labels the metric).
  struct Answer {
    absl::StatusOr<WorkspaceView> result;
    absl::string_view outcome;
  };
  // Another attempt, after what this one asks for.
  struct Retry {
    bool read = false;        // The next attempt reads from the database.
    bool catch_up = false;    // Apply what other replicas committed first...
    bool confirms = false;    // ...which confirms this call's negative answers.
    bool spread_out = false;  // Pause a moment (a lost race).
    std::optional<int64_t> wait_past_version;  // Wait for another request for the id.
  };
  using Next = std::variant<Answer, Retry>;
  Next Attempt(const replica::PlaceRequest& request, Progress& progress);
  // A quoted request: nullopt while the quote holds, else the answer (or a
  // retry that confirms the change first).
  std::optional<Next> CheckQuoted(const replica::PlaceRequest& request,
                                  const replica::PlacementInputs& in, const Progress& progress);
  // The decision and tentative hold: as quoted, or the replica's own.
  replica::ReplicaMirror::HeldDecision DecideAndHold(const core::WorkspaceClass& cls,
                                                     const core::Catalog& catalog,
                                                     const std::string& id,
                                                     const Progress& progress);
  // Builds and commits a decision that placed.
  Next CommitPlaced(const replica::PlaceRequest& request, const core::WorkspaceClass& cls,
                    const replica::ReplicaMirror::HeldDecision& held, core::Workspace w,
                    store::WorkspaceWrite write);
  // Saves a workspace nothing can hold now as pending (the queue's tail).
  Next SavePending(core::Workspace w, const core::WorkspaceClass& cls, store::WorkspaceWrite write);
  // What a placement decides with: from memory on the hot path (a workspace
  // this replica never saw, cached settings), else (`read`) from the
  // database. From memory, the catalog generation is the mirror's
  // (`catalog_generation`, read by the caller).
  absl::StatusOr<replica::PlacementInputs> InputsFor(const replica::PlaceRequest& request, bool read,
                                            int64_t catalog_generation);

  const Parts parts_;
  const int max_attempts_;
  const core::Clock clock_;
};

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_PLACE_ATTEMPT_H_
