#include "server/pipeline/place_attempt.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/core/class_resolution.h"
#include "server/core/error_reason.h"
#include "server/core/mig.h"
#include "server/core/mig_profiles.h"
#include "server/log/log.h"
#include "server/placement/filters.h"

namespace wsched::pipeline {
namespace {

core::Workspace NewRecord(const replica::PlaceRequest& request, const core::WorkspaceClass& cls,
                          const core::ClassResolution& resolution) {
  core::Workspace w;
  w.id = request.workspace_id;
  w.org_id = request.org_id;
  w.project_id = request.project_id;
  w.user_id = request.user_id;
  w.class_id = cls.id;
  w.class_source = core::ClassSourceName(resolution.source);
  w.explanation = resolution.explanation;
  w.priority = request.priority;
  return w;
}

absl::Status Unplaceable(const core::WorkspaceClass& cls, const std::string& why) {
  return core::PreconditionError(
      core::ErrorReason::kClassUnplaceable, "CAPACITY", absl::StrCat("class/", cls.id),
      absl::StrCat("class ", cls.id, " can never be placed: ", why), {{"class", cls.id}});
}

absl::Status QuoteStale(const placement::QuoteChange& change) {
  return core::PreconditionError(core::ErrorReason::kQuoteStale, "QUOTE", change.change,
                                 absl::StrCat("the quote no longer holds: ", change.detail,
                                              "; ask for a new one (validate_only)"),
                                 {{"change", change.change}, {"detail", change.detail}});
}

// The org's GPU quota against the least the class can take (a slice
// class's smallest slice; the commit checks the share it got): the
// refusal, or OK.
absl::Status CheckOrgQuota(const replica::PlaceRequest& request, const core::WorkspaceClass& cls,
                           const replica::PlacementInputs& in) {
  const int64_t needs = core::LeastGpuSevenths(cls);
  if (needs > 0 && in.org.gpu_quota >= 0 &&
      in.org_gpu_sevenths + needs > in.org.gpu_quota * core::kMigComputeSlices) {
    return core::OrgGpuQuotaExceededInSevenths(request.org_id, cls.id, in.org_gpu_sevenths,
                                               in.org.gpu_quota, needs);
  }
  return absl::OkStatus();
}

std::optional<int64_t> QuotaOf(const core::OrgSettings& org) {
  if (org.gpu_quota < 0) return std::nullopt;
  return org.gpu_quota;
}

}  // namespace

absl::StatusOr<WorkspaceView> PlaceAttempts::Quote(const replica::PlaceRequest& request) {
  auto [catalog, generation] = parts_.mirror->CatalogNow();
  absl::StatusOr<replica::PlacementInputs> in = parts_.store->ReadInputs(request);
  if (!in.ok()) return in.status();
  // What the request itself would answer: the same placement.
  if (in->existing && core::IsActive(in->existing->workspace)) {
    return parts_.views->Of(*in->existing);
  }
  std::string previous = request.restart && in->existing ? in->existing->workspace.class_id : "";
  auto resolution =
      core::ResolveClass({request.org_id, request.project_id, request.class_id, previous}, *catalog,
                         in->project, in->org);
  if (!resolution.ok()) return resolution.status();
  const core::WorkspaceClass* cls = catalog->FindClass(resolution->class_id);
  if (absl::Status quota = CheckOrgQuota(request, *cls, *in); !quota.ok()) return quota;
  if (placement::PlanPools(*cls, catalog->pools).empty()) {
    return Unplaceable(*cls, placement::WhyNoPool(*cls, catalog->pools));
  }
  WorkspaceView view;
  view.quote_only = true;
  view.workspace = NewRecord(request, *cls, *resolution);
  const absl::Time now = clock_();
  for (placement::Quote& quote :
       parts_.views->Quotes(placement::ClassesToQuote(*cls, catalog->classes, in->project, in->org),
                            in->org_gpu_sevenths, QuotaOf(in->org))) {
    std::string token = placement::EncodeQuoteToken(
        placement::TokenOf(quote, request.workspace_id, request.org_id, request.project_id, now));
    view.quotes.push_back({std::move(quote), std::move(token)});
  }
  return view;
}

absl::StatusOr<WorkspaceView> PlaceAttempts::Place(const replica::PlaceRequest& request) {
  if (request.validate_only) return Quote(request);
  const absl::Time start = clock_();
  Progress progress;
  auto finish = [&](Answer answer) {
    parts_.metrics->ObservePlacement(progress.class_label, answer.result.ok() ? answer.outcome : "error",
                               clock_() - start);
    return std::move(answer.result);
  };
  if (!request.quote_token.empty()) {
    absl::StatusOr<placement::QuoteToken> token = placement::DecodeQuoteToken(request.quote_token);
    if (!token.ok()) return finish(Answer{token.status(), "error"});
    progress.quoted = *std::move(token);
    progress.read = true;  // The quote's quota is judged on the stored figures.
  }
  for (int attempt = 0; attempt < max_attempts_; ++attempt) {
    Next next = Attempt(request, progress);
    if (auto* answer = std::get_if<Answer>(&next)) return finish(std::move(*answer));
    const Retry& retry = std::get<Retry>(next);
    progress.read |= retry.read;
    if (retry.wait_past_version) {
      // Another request for the same id holds it: wake when its commit is
      // mirrored rather than after a guess at how long a commit takes.
      const std::string& id = request.workspace_id;
      parts_.watches->Wait(id, *retry.wait_past_version, absl::Seconds(1),
                           [&] { return parts_.mirror->KnownVersion(id); });
    }
    if (retry.catch_up) {
      progress.confirmed |= retry.confirms;
      if (absl::Status s = parts_.follower->CatchUp(); !s.ok()) return finish(Answer{s, "error"});
    }
    if (retry.spread_out) {
      // Racing replicas retry after a short pause of their own, so they
      // spread out rather than collide again.
      absl::SleepFor(absl::Milliseconds(1 + absl::ToUnixNanos(clock_()) % (5 * (attempt + 1))));
    }
  }
  return finish(Answer{absl::AbortedError(absl::StrCat("placing ", request.workspace_id,
                                                 " kept losing races; retry the request")),
                 "error"});
}

PlaceAttempts::Next PlaceAttempts::Attempt(const replica::PlaceRequest& request, Progress& progress) {
  // Catch up with the feed, once per call, before a negative answer.
  const Retry confirm{.catch_up = true, .confirms = true};
  // The catalog first: an apply committed while the inputs are read shows
  // as a newer generation below, and the attempt catches up.
  auto [catalog, generation] = parts_.mirror->CatalogNow();
  absl::StatusOr<replica::PlacementInputs> in = InputsFor(request, progress.read, generation);
  if (!in.ok()) return Answer{in.status(), "error"};
  // Idempotent: the same id answers with the same placement (or queue slot).
  if (in->existing && core::IsActive(in->existing->workspace)) {
    progress.class_label = in->existing->workspace.class_id;
    return Answer{parts_.views->Of(*in->existing), "repeated"};
  }
  // A lost workspace that still holds its old node's capacity is stopped
  // (freed) first, then restarted like any stopped one.
  if (in->existing && !in->existing->released) {
    if (auto stopped = parts_.stops->Stop(request.workspace_id); !stopped.ok()) {
      return Answer{stopped.status(), "error"};
    }
    return Retry{.read = true};
  }
  if (in->catalog_generation > generation) return confirm;  // Decide with the newest catalog.

  if (progress.quoted) {
    if (std::optional<Next> stale = CheckQuoted(request, *in, progress)) return *std::move(stale);
  }
  std::string previous = request.restart && in->existing ? in->existing->workspace.class_id : "";
  // A quoted request asks for the quoted class (CheckQuoted saw the request ask for no other).
  const std::string& requested = progress.quoted ? progress.quoted->class_id : request.class_id;
  auto resolution = core::ResolveClass({request.org_id, request.project_id, requested, previous},
                                       *catalog, in->project, in->org);
  if (!resolution.ok()) {
    if (!progress.confirmed) {
      Retry retry = confirm;
      retry.read = true;
      return retry;
    }
    if (progress.quoted) {
      return Answer{QuoteStale({"class", std::string(resolution.status().message())}), "refused"};
    }
    return Answer{resolution.status(), "refused"};
  }
  const core::WorkspaceClass* cls = catalog->FindClass(resolution->class_id);
  progress.class_label = cls->id;
  // A quoted request's quota was checked with its quote.
  if (!progress.quoted) {
    if (absl::Status quota = CheckOrgQuota(request, *cls, *in); !quota.ok()) {
      return Answer{quota, "refused"};
    }
  }
  core::Workspace w = NewRecord(request, *cls, *resolution);
  replica::ReplicaMirror::HeldDecision held = DecideAndHold(*cls, *catalog, w.id, progress);
  if (held.id_busy) return Retry{.read = true, .wait_past_version = parts_.mirror->KnownVersion(w.id)};
  const placement::Decision& decision = held.decision;
  if (progress.quoted && progress.quoted->when == placement::QuoteWhen::kNow) {
    // The quoted node only: the view the quote was checked on may have been
    // a moment behind the live snapshot.
    auto* placed = std::get_if<placement::Placed>(&decision);
    if (placed == nullptr || placed->node != progress.quoted->node) {
      if (placed != nullptr) parts_.mirror->ReleaseTentative(w.id);
      if (!progress.confirmed) return Retry{.read = true, .catch_up = true, .confirms = true};
      const std::string& node = progress.quoted->node;
      return Answer{
          QuoteStale({"node_full",
                      absl::StrCat("node ", node, " no longer has room for class ", cls->id)}),
          "refused"};
    }
  }
  // Nodes or capacity added on another replica may not have reached us.
  if (!std::holds_alternative<placement::Placed>(decision) && !progress.confirmed) return confirm;
  if (auto* never = std::get_if<placement::Never>(&decision)) {
    if (progress.quoted) return Answer{QuoteStale({"pool", never->reason}), "refused"};
    return Answer{Unplaceable(*cls, never->reason), "never"};
  }
  // What the decision rests on, for the commit to confirm.
  store::WorkspaceWrite write;
  write.from = {in->existing ? in->existing->version : 0, false};
  write.catalog_generation = generation;
  write.project_settings_version = in->project_version;
  write.org_settings_version = in->org_version;
  if (std::holds_alternative<placement::NotNow>(decision)) {
    return SavePending(std::move(w), *cls, std::move(write));
  }
  return CommitPlaced(request, *cls, held, std::move(w), std::move(write));
}

std::optional<PlaceAttempts::Next> PlaceAttempts::CheckQuoted(const replica::PlaceRequest& request,
                                                              const replica::PlacementInputs& in,
                                                              const Progress& progress) {
  placement::QuoteCheckInputs check;
  check.workspace_id = request.workspace_id;
  check.org_id = request.org_id;
  check.project_id = request.project_id;
  check.requested_class = request.class_id;
  check.org_sevenths_held = in.org_gpu_sevenths;
  check.org_gpu_quota = QuotaOf(in.org);
  std::optional<placement::QuoteChange> change = parts_.views->CheckQuote(*progress.quoted, check);
  if (!change) return std::nullopt;
  // A change this replica has not caught up with may be undone already.
  if (!progress.confirmed && change->change != "expired" && change->change != "request") {
    return Retry{.read = true, .catch_up = true, .confirms = true};
  }
  return Answer{QuoteStale(*change), "refused"};
}

replica::ReplicaMirror::HeldDecision PlaceAttempts::DecideAndHold(const core::WorkspaceClass& cls,
                                                                  const core::Catalog& catalog,
                                                                  const std::string& id,
                                                                  const Progress& progress) {
  if (!progress.quoted) return parts_.mirror->DecideAndHold(cls, catalog, id);
  const placement::QuoteToken& token = *progress.quoted;
  return parts_.mirror->DecideAndHold(catalog, id, [&](const placement::Snapshot& snapshot) {
    return placement::DecideAsQuoted(token, cls, catalog.pools, snapshot);
  });
}

PlaceAttempts::Next PlaceAttempts::CommitPlaced(const replica::PlaceRequest& request,
                                                const core::WorkspaceClass& cls,
                                                const replica::ReplicaMirror::HeldDecision& held,
                                                core::Workspace w, store::WorkspaceWrite write) {
  write.kind = store::WorkspaceWrite::Kind::kPlace;
  absl::StatusOr<HeldPlacement> built = parts_.commit->Build(cls, held, std::move(w), std::move(write));
  if (!built.ok()) return Answer{built.status(), "error"};
  std::vector<HeldPlacement> one;
  one.push_back(*std::move(built));
  const store::WriteOutcome committed = parts_.commit->Commit(one)[0];
  if (committed.status.ok()) {
    const HeldPlacement& placed = one[0];
    return Answer{parts_.views->Of({placed.workspace, committed.version, false}), "placed"};
  }
  if (absl::IsResourceExhausted(committed.status)) {
    NoteBudgetRefusal(*parts_.metrics, committed.status);
    return Answer{committed.status, "refused"};
  }
  if (!absl::IsAborted(committed.status)) return Answer{committed.status, "error"};
  // Lost a race: apply what the others committed and try again.
  log::Info("placement lost a race; catching up",
            {{"workspace", request.workspace_id}, {"error", std::string(committed.status.message())}});
  return Retry{.read = true, .catch_up = true, .spread_out = true};
}

PlaceAttempts::Next PlaceAttempts::SavePending(core::Workspace w, const core::WorkspaceClass& cls,
                                              store::WorkspaceWrite write) {
  w.state = core::WorkspaceState::kPending;
  // Behind the whole queue: not queued yet. The quota and policy let it in.
  if (auto reason = parts_.views->ExplainPending(cls.id, 0, parts_.views->Scaling(), {})) w.pending_reason = reason->detail;
  write.kind = store::WorkspaceWrite::Kind::kSavePending;
  write.workspace = w;
  store::WriteOutcome saved = parts_.store->Write(std::move(write));
  // Something changed meanwhile: read, retry.
  if (absl::IsAborted(saved.status)) return Retry{.read = true, .catch_up = true};
  if (!saved.status.ok()) return Answer{saved.status, "error"};
  w.created_at = clock_();
  parts_.mirror->Apply({w, saved.version, /*released=*/false});
  log::Info("workspace pending", {{"workspace", w.id}, {"class", w.class_id},
                                  {"reason", w.pending_reason}});
  absl::StatusOr<WorkspaceView> view = parts_.views->Of({w, saved.version, false});
  // The estimate shown now is the one the placement is checked against.
  if (view.ok() && view->estimated_wait && view->estimated_wait_p90 && parts_.estimates) {
    parts_.estimates->Given(w.id, w.created_at, *view->estimated_wait, *view->estimated_wait_p90);
  }
  return Answer{std::move(view), "pending"};
}

absl::StatusOr<replica::PlacementInputs> PlaceAttempts::InputsFor(
    const replica::PlaceRequest& request, bool read, int64_t catalog_generation) {
  if (!read) {
    std::optional<replica::CachedSettings> cached =
        parts_.settings->Cached(request.project_id, request.org_id);
    const bool known = parts_.mirror->KnownVersion(request.workspace_id) > 0;
    // The hot path: a workspace this replica has never seen (new, as far as
    // it can tell: if not, the commit's guard says so and the next attempt
    // reads), cached settings, no GPU quota to count.
    if (cached && !known && cached->org.gpu_quota < 0) {
      replica::PlacementInputs in;
      in.project = std::move(cached->project);
      in.project_version = cached->project_version;
      in.org = std::move(cached->org);
      in.org_version = cached->org_version;
      in.catalog_generation = catalog_generation;
      return in;
    }
  }
  absl::StatusOr<replica::PlacementInputs> in = parts_.store->ReadInputs(request);
  if (in.ok() && !(in->existing && core::IsActive(in->existing->workspace))) {
    parts_.settings->Remember({in->project, in->project_version, in->org, in->org_version});
  }
  return in;
}

}  // namespace wsched::pipeline
