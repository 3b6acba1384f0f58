#include "server/grpc/watch_workspaces.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/grpc/handler.h"
#include "server/grpc/node_identity.h"
#include "server/grpc/status.h"
#include "server/grpc/workspace_message.h"

namespace wsched::grpc_api {
namespace {

constexpr char kMethod[] = "/wsched.v1.PlacementService/WatchWorkspaces";
constexpr size_t kListingPage = 100;  // Workspaces per EXISTING message.
constexpr int kCatchUpPage = 256;     // Change-log entries per read.
// Versions one KIND_CHANGES message may carry when a stream is behind.
constexpr size_t kChangesPerMessage = 64;

std::optional<core::WorkspaceState> StateOf(v1::WorkspaceState state) {
  switch (state) {
    case v1::WORKSPACE_STATE_PENDING: return core::WorkspaceState::kPending;
    case v1::WORKSPACE_STATE_PLACED: return core::WorkspaceState::kPlaced;
    case v1::WORKSPACE_STATE_STOPPED: return core::WorkspaceState::kStopped;
    case v1::WORKSPACE_STATE_LOST: return core::WorkspaceState::kLost;
    default: return std::nullopt;
  }
}

// The request's filter, narrowed to what the caller may see: a project
// owner its orgs and projects, a node's agent its own node.
absl::StatusOr<watch::Filter> FilterFor(const Principal& who, const v1::WorkspaceWatchFilter& in,
                                        metrics::Metrics* metrics) {
  watch::Filter filter{in.org_id(), in.project_id(), in.class_id(), in.pool(), in.node_name(),
                       {}, std::nullopt, std::nullopt};
  for (int state : in.states()) {
    if (auto s = StateOf(static_cast<v1::WorkspaceState>(state))) filter.states.insert(*s);
  }
  if (who.Has(Role::kAdmin) || who.Has(Role::kControlPlane)) return filter;
  if (who.Has(Role::kProjectOwner)) {
    // As Principal::CoversProject: its projects when it names any, else
    // every project of its orgs.
    if (who.projects.empty()) {
      filter.scope_orgs = std::vector<std::string>(who.orgs.begin(), who.orgs.end());
    } else {
      filter.scope_projects = std::vector<std::string>(who.projects.begin(), who.projects.end());
    }
    return filter;
  }
  // An agent: the workspaces placed on the node it speaks for.
  if (filter.node.empty()) {
    return core::InvalidFieldError("filter.node_name",
                                   "a node's agent watches the workspaces of its own node: set it "
                                   "to that node");
  }
  if (absl::Status s = CheckSpeaksForNode(who, filter.node, "WatchWorkspaces", metrics); !s.ok()) {
    return s;
  }
  return filter;
}

absl::Status ResumeTooOld(int64_t resume, int64_t oldest) {
  return core::ReasonError(
      absl::StrCat("resume_version ", resume, " is older than the change log keeps (the oldest "
                   "version to resume from is ", oldest, "); list again with resume_version 0"),
      {.reason = core::ErrorReason::kResumeTooOld,
       .metadata = {{"resume_version", absl::StrCat(resume)},
                    {"oldest_version", absl::StrCat(oldest)}}});
}

v1::WorkspaceChange::What WhatToProto(watch::What what) {
  switch (what) {
    case watch::What::kExisting: return v1::WorkspaceChange::WHAT_EXISTING;
    case watch::What::kPending: return v1::WorkspaceChange::WHAT_PENDING;
    case watch::What::kPlaced: return v1::WorkspaceChange::WHAT_PLACED;
    case watch::What::kStopped: return v1::WorkspaceChange::WHAT_STOPPED;
    case watch::What::kLost: return v1::WorkspaceChange::WHAT_LOST;
    case watch::What::kIdleChanged: return v1::WorkspaceChange::WHAT_IDLE_CHANGED;
    case watch::What::kDeleted: return v1::WorkspaceChange::WHAT_DELETED;
  }
  return v1::WorkspaceChange::WHAT_UNSPECIFIED;
}

v1::WatchWorkspacesResponse::Kind KindToProto(watch::Batch::Kind kind) {
  switch (kind) {
    case watch::Batch::Kind::kExisting: return v1::WatchWorkspacesResponse::KIND_EXISTING;
    case watch::Batch::Kind::kSynced: return v1::WatchWorkspacesResponse::KIND_SYNCED;
    case watch::Batch::Kind::kChanges: return v1::WatchWorkspacesResponse::KIND_CHANGES;
    case watch::Batch::Kind::kBookmark: return v1::WatchWorkspacesResponse::KIND_BOOKMARK;
  }
  return v1::WatchWorkspacesResponse::KIND_UNSPECIFIED;
}

void ChangeToProto(const watch::Change& change, int64_t version, v1::WorkspaceChange* out) {
  const watch::Happened& happened = *change.happened;
  out->set_what(WhatToProto(change.what));
  out->set_version(version);
  out->set_workspace_version(happened.version);
  out->set_left_filter(change.left_filter);
  v1::Workspace* workspace = out->mutable_workspace();
  if (happened.after) {
    pipeline::WorkspaceView view;
    view.workspace = *happened.after;
    view.version = happened.version;
    // A hand-off that cannot be mapped leaves the device spec out; the
    // state and where it runs still go.
    (void)WorkspaceToProto(view, workspace);
    return;
  }
  // Deleted: what is known of it is what it was.
  workspace->set_id(happened.id);
  workspace->set_org_id(happened.before.org_id);
  workspace->set_project_id(happened.before.project_id);
  workspace->set_class_id(happened.before.class_id);
  if (happened.before.state) workspace->set_state(StateToProto(*happened.before.state));
}

grpc::ByteBuffer Serialized(const watch::Batch& batch) {
  v1::WatchWorkspacesResponse message;
  message.set_kind(KindToProto(batch.kind));
  message.set_version(batch.version);
  const int64_t version = batch.kind == watch::Batch::Kind::kChanges ? batch.version : 0;
  for (const watch::Change& change : batch.changes) {
    ChangeToProto(change, version, message.add_changes());
  }
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  (void)grpc::SerializationTraits<v1::WatchWorkspacesResponse>::Serialize(message, &bytes,
                                                                          &own_buffer);
  return bytes;
}

// The batch's wire bytes, made once for every stream it was handed to.
grpc::ByteBuffer EncodedOne(const watch::Batch& batch) {
  if (batch.memo == nullptr) return Serialized(batch);
  absl::MutexLock lock(&batch.memo->mu);
  if (batch.memo->encoded == nullptr) {
    batch.memo->encoded = std::make_shared<const grpc::ByteBuffer>(Serialized(batch));
  }
  // A copy shares the slices.
  return *std::static_pointer_cast<const grpc::ByteBuffer>(batch.memo->encoded);
}

// The label of wsched_watch_streams_ended_total for a stream ended with `status`.
const char* EndReasonOf(const absl::Status& status) {
  std::optional<core::ErrorDetails> details = core::DetailsOf(status);
  if (details && details->reason == core::ErrorReason::kWatchTooSlow) return "too_slow";
  if (details && details->reason == core::ErrorReason::kResumeTooOld) return "resume_too_old";
  return "error";
}

// One message of several kChanges batches: protobuf merges concatenated
// messages (repeated fields append, the last version wins), so each
// batch's shared encoding is reused as it is.
grpc::ByteBuffer Encoded(const std::vector<watch::Batch>& batches) {
  if (batches.size() == 1) return EncodedOne(batches.front());
  std::vector<grpc::Slice> slices;
  for (const watch::Batch& batch : batches) {
    std::vector<grpc::Slice> parts;
    (void)EncodedOne(batch).Dump(&parts);
    slices.insert(slices.end(), parts.begin(), parts.end());
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// A refused call: finished before it starts.
class Refused final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit Refused(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* WorkspacesWatch::Start(
    const Parts& parts, grpc::CallbackServerContext* context,
    const grpc::ByteBuffer* raw_request) {
  const ServiceContext& services = *parts.services;
  v1::WatchWorkspacesRequest parsed;
  grpc::ByteBuffer copy(*raw_request);
  if (!grpc::SerializationTraits<v1::WatchWorkspacesRequest>::Deserialize(&copy, &parsed).ok()) {
    return new Refused(ToGrpc(core::InvalidFieldError(
        "request", "must be a WatchWorkspacesRequest")));
  }
  const v1::WatchWorkspacesRequest* request = &parsed;
  absl::StatusOr<watch::Filter> filter = [&]() -> absl::StatusOr<watch::Filter> {
    auto who = services.auth->Authorize(*context, kMethod);
    if (!who.ok()) return who.status();
    if (services.rate_limiter != nullptr) {
      if (absl::Status admitted = services.rate_limiter->Admit(*who);
          !admitted.ok())
        return admitted;
    }
    if (services.max_request_bytes > 0 &&
        request->ByteSizeLong() > static_cast<size_t>(services.max_request_bytes)) {
      return MessageTooLarge(request->ByteSizeLong(), services.max_request_bytes);
    }
    if (absl::Status valid = ValidateRequest(*request); !valid.ok()) return valid;
    return FilterFor(*who, request->filter(), services.metrics);
  }();
  if (!filter.ok()) return new Refused(ToGrpc(filter.status()));
  auto* watch = new WorkspacesWatch(parts, *std::move(filter), request->resume_version());
  if (services.metrics != nullptr) services.metrics->WatchStreamStarted();
  parts.pool->Submit([watch] {
    watch->Open();
    watch->Release();
  });
  return watch;
}

WorkspacesWatch::WorkspacesWatch(const Parts& parts, watch::Filter filter, int64_t resume_version)
    : parts_(parts),
      filter_(std::move(filter)),
      resume_version_(resume_version),
      outbox_(parts.buffer, [this] { Pump(); }) {}

void WorkspacesWatch::Open() {
  watch::HistorySource& history = parts_.services->scheduler->workspace_history();
  if (resume_version_ > 0) {
    if (absl::Status s = CatchUpAndJoin(resume_version_, true); !s.ok()) outbox_.End(s);
    return;
  }
  absl::StatusOr<watch::Listing> listing = history.List(filter_);
  if (!listing.ok()) {
    outbox_.End(listing.status());
    return;
  }
  const auto &all = listing->records;
  for (size_t from = 0; from < all.size(); from += kListingPage) {
    watch::Batch page{watch::Batch::Kind::kExisting, 0, {}};
    for (size_t i = from; i < all.size() && i < from + kListingPage; ++i) {
      page.changes.push_back({watch::What::kExisting, false, all[i]});
    }
    if (!outbox_.Put(std::move(page))) return;
  }
  if (!outbox_.Put({watch::Batch::Kind::kSynced, listing->version, {}})) return;
  if (absl::Status s = CatchUpAndJoin(listing->version, false); !s.ok()) outbox_.End(s);
}

absl::Status WorkspacesWatch::CatchUpAndJoin(int64_t cursor, bool check_resume) {
  scheduler::Scheduler& scheduler = *parts_.services->scheduler;
  while (true) {
    if (!check_resume) {
      watch::Fanout::Joined joined =
          scheduler.workspace_fanout().Join(&outbox_, filter_, cursor, scheduler.clock()());
      if (joined.id) {
        bool done = false;
        {
          absl::MutexLock lock(&mu_);
          done = done_;
          if (!done) member_ = joined.id;
        }
        // Not under mu_: the fanout's lock comes first (it calls Pump).
        if (done) scheduler.workspace_fanout().Leave(*joined.id);  // OnDone came first.
        return absl::OkStatus();
      }
    }
    absl::StatusOr<watch::HistoryRead> read =
        scheduler.workspace_history().ReadSince(cursor, kCatchUpPage);
    if (!read.ok()) return read.status();
    if (check_resume && cursor > read->head) {
      return core::InvalidFieldError(
          "resume_version", absl::StrCat("must be a version this service sent; ", cursor,
                                         " is newer than the newest, ", read->head));
    }
    if (!read->reaches) return ResumeTooOld(cursor, read->oldest);
    check_resume = false;
    for (const watch::Entry& entry : read->entries) {
      if (auto batch = watch::BatchFor(filter_, entry)) {
        if (!outbox_.Put(std::move(*batch))) return absl::OkStatus();  // The stream ended.
      }
      cursor = entry.version;
    }
  }
}

void WorkspacesWatch::Pump() {
  std::optional<absl::Status> end;
  std::vector<watch::Batch> batches;
  bool more = false;
  {
    absl::MutexLock lock(&mu_);
    if (writing_ || finished_) return;
    watch::Outbox::Run run = outbox_.TakeRun(kChangesPerMessage);
    if (run.end) {
      finished_ = true;
      end = std::move(run.end);
      end_reason_ = EndReasonOf(*end);
    } else if (run.batches.empty()) {
      return;
    } else {
      writing_ = true;
      batches = std::move(run.batches);
      more = run.more;
    }
  }
  if (!batches.empty()) {
    message_version_ = batches.back().version;
    message_ = Encoded(batches);
  }
  // Outside the lock: gRPC may run OnWriteDone before StartWrite returns.
  if (end) {
    Finish(ToGrpc(*end));
  } else if (more) {
    // The next write follows at once and flushes both: one send, not two.
    StartWrite(&message_, grpc::WriteOptions().set_buffer_hint());
  } else {
    StartWrite(&message_);
  }
}

void WorkspacesWatch::OnWriteDone(bool ok) {
  bool finish = false;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok && !finished_) {  // The client went away.
      finished_ = true;
      finish = true;
    }
  }
  if (finish) {
    Finish(grpc::Status::OK);
    return;
  }
  if (message_version_ > 0) outbox_.Sent(message_version_);
  Pump();
}

void WorkspacesWatch::OnCancel() {
  bool finish = false;
  {
    absl::MutexLock lock(&mu_);
    if (!writing_ && !finished_) {
      finished_ = true;
      finish = true;
    }
  }
  outbox_.Close();  // The opening work stops waiting for room.
  if (finish) Finish(grpc::Status::CANCELLED);
}

void WorkspacesWatch::OnDone() {
  std::optional<watch::Fanout::Id> member;
  const char* reason = nullptr;
  {
    absl::MutexLock lock(&mu_);
    done_ = true;
    member = member_;
    reason = end_reason_;
  }
  if (parts_.services->metrics != nullptr) parts_.services->metrics->WatchStreamEnded(reason);
  if (member) parts_.services->scheduler->workspace_fanout().Leave(*member);
  outbox_.Close();
  Release();
}

void WorkspacesWatch::Release() {
  if (holders_.fetch_sub(1) == 1) delete this;
}

}  // namespace wsched::grpc_api
