// One watch stream (WatchWorkspaces, WatchNodes; docs/api.md "Following
// every workspace", "Following every node"), whatever kind of record it
// follows: authorize, then on a pool thread list (or check the resume
// point) and catch up from the change log until the stream has what the
// fanout has, join the fanout, and from then on write what its outbox
// holds, one message at a time. The fanout never waits for this stream: a
// stream that falls --watch_buffer messages behind ends with
// WATCH_TOO_SLOW. The stream writes bytes (a raw callback method): a batch
// the fanout handed to many streams is encoded once, by the first that
// writes it.
//
// A Face says what is particular to one RPC:
//   Kind                      the watch kind (server/watch/batch.h)
//   Request, Response         its messages; Response has the nested Kind
//                             enum (KIND_EXISTING, ...) and repeated changes
//   kMethod                   the full method name, for the auth table
//   FilterFor(who, request, metrics)  the filter, narrowed to what the
//                             caller may see, or why it may see nothing
//   ChangeToProto(change, version, out)  one change, as committed
//   FanoutOf(scheduler), HistoryOf(scheduler)  where the kind streams from
// and ValidateRequest(const Request&) is overloaded for it
// (request_validation.h).
//
// Lifetime: gRPC's OnDone and the pool's opening work each hold the
// reactor; the last of the two to finish deletes it. OnDone leaves the
// fanout, after which nothing calls it from there.
//
// Locks, in the order they nest: the fanout's (it hands a batch to the
// outbox, which calls Pump), mu_, the outbox's. Nothing calls the fanout
// while holding mu_.
#ifndef WSCHED_SERVER_GRPC_WATCH_STREAM_H_
#define WSCHED_SERVER_GRPC_WATCH_STREAM_H_

#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/core/error_reason.h"
#include "server/grpc/blocking_pool.h"
#include "server/grpc/handler.h"
#include "server/grpc/request_validation.h"
#include "server/grpc/service_context.h"
#include "server/grpc/status.h"
#include "server/scheduler/scheduler.h"
#include "server/watch/batch.h"
#include "server/watch/fanout.h"
#include "server/watch/history_source.h"
#include "server/watch/outbox.h"

namespace wsched::grpc_api {

// What every watch stream shares, apart from its Face (watch_stream.cc).
namespace watch_stream {

inline constexpr size_t kListingPage = 100; // Records per EXISTING message.
inline constexpr int kCatchUpPage = 256;    // Change-log entries per read.
// Versions one KIND_CHANGES message may carry when a stream is behind.
inline constexpr size_t kChangesPerMessage = 64;

// OUT_OF_RANGE, RESUME_TOO_OLD naming the oldest version to resume from.
absl::Status ResumeTooOld(int64_t resume, int64_t oldest);
// INVALID_ARGUMENT: a resume_version past the head.
absl::Status ResumeAhead(int64_t resume, int64_t head);
// The label of wsched_watch_streams_ended_total for a stream ended with
// `status`.
const char *EndReasonOf(const absl::Status &status);
// Several batches' bytes as one message: protobuf merges concatenated
// messages (repeated fields append, the last version wins).
grpc::ByteBuffer Concatenated(const std::vector<grpc::ByteBuffer> &messages);

// A refused call: finished before it starts.
class Refused final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
public:
  explicit Refused(const grpc::Status &status) { Finish(status); }
  void OnDone() override { delete this; }
};

// The response's kind; the Kind enums of every watch response share names.
template <typename Response>
typename Response::Kind KindToProto(watch::BatchKind kind) {
  switch (kind) {
  case watch::BatchKind::kExisting:
    return Response::KIND_EXISTING;
  case watch::BatchKind::kSynced:
    return Response::KIND_SYNCED;
  case watch::BatchKind::kChanges:
    return Response::KIND_CHANGES;
  case watch::BatchKind::kBookmark:
    return Response::KIND_BOOKMARK;
  }
  return Response::KIND_UNSPECIFIED;
}

} // namespace watch_stream

template <typename Face>
class WatchStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
public:
  using Kind = typename Face::Kind;
  using Filter = typename Kind::Filter;
  using Batch = watch::BasicBatch<Kind>;

  struct Parts {
    const ServiceContext *services = nullptr;
    BlockingPool *pool = nullptr; // Runs the listing and the catch-up.
    size_t buffer = 1000; // --watch_buffer: messages a stream may fall behind.
  };

  // The stream's reactor; a refused call is finished at once.
  static grpc::ServerWriteReactor<grpc::ByteBuffer> *
  Start(const Parts &parts, grpc::CallbackServerContext *context,
        const grpc::ByteBuffer *request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

private:
  WatchStream(const Parts &parts, Filter filter, int64_t resume_version)
      : parts_(parts), filter_(std::move(filter)),
        resume_version_(resume_version),
        outbox_(parts.buffer, [this] { Pump(); }) {}

  // The request, authorized, admitted and valid, as the filter to follow.
  static absl::StatusOr<Filter> Admit(const ServiceContext &services,
                                      grpc::CallbackServerContext *context,
                                      const typename Face::Request &request);
  // On the pool: the listing or the resume check, the catch-up, the join.
  void Open();
  absl::Status CatchUpAndJoin(int64_t cursor, bool check_resume);
  // Writes the next message when none is in flight.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);
  // One of the two holders is done; the second deletes the reactor.
  void Release();

  static grpc::ByteBuffer Serialized(const Batch &batch);
  // The batch's wire bytes, made once for every stream it was handed to.
  static grpc::ByteBuffer EncodedOne(const Batch &batch);
  static grpc::ByteBuffer Encoded(const std::vector<Batch> &batches);

  scheduler::Scheduler &scheduler() const {
    return *parts_.services->scheduler;
  }

  const Parts parts_;
  const Filter filter_;
  const int64_t resume_version_;
  watch::BasicOutbox<Kind> outbox_;
  std::atomic<int> holders_{2};

  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false; // Finish was called.
  bool done_ ABSL_GUARDED_BY(mu_) = false;     // OnDone ran.
  // Why it ended, for wsched_watch_streams_ended_total.
  const char *end_reason_ ABSL_GUARDED_BY(mu_) = "client_gone";
  std::optional<watch::Fanout::Id> member_ ABSL_GUARDED_BY(mu_);
  // The message in flight (its wire bytes) and the version it completes (0:
  // none).
  grpc::ByteBuffer message_;
  int64_t message_version_ = 0;
};

template <typename Face>
absl::StatusOr<typename WatchStream<Face>::Filter>
WatchStream<Face>::Admit(const ServiceContext &services,
                         grpc::CallbackServerContext *context,
                         const typename Face::Request &request) {
  auto who = services.auth->Authorize(*context, Face::kMethod);
  if (!who.ok())
    return who.status();
  if (services.rate_limiter != nullptr) {
    if (absl::Status admitted = services.rate_limiter->Admit(*who);
        !admitted.ok()) {
      return admitted;
    }
  }
  if (services.max_request_bytes > 0 &&
      request.ByteSizeLong() >
          static_cast<size_t>(services.max_request_bytes)) {
    return MessageTooLarge(request.ByteSizeLong(), services.max_request_bytes);
  }
  if (absl::Status valid = ValidateRequest(request); !valid.ok())
    return valid;
  return Face::FilterFor(*who, request, services.metrics);
}

template <typename Face>
grpc::ServerWriteReactor<grpc::ByteBuffer> *
WatchStream<Face>::Start(const Parts &parts,
                         grpc::CallbackServerContext *context,
                         const grpc::ByteBuffer *raw_request) {
  const ServiceContext &services = *parts.services;
  typename Face::Request request;
  grpc::ByteBuffer copy(*raw_request);
  if (!grpc::SerializationTraits<typename Face::Request>::Deserialize(&copy,
                                                                      &request)
           .ok()) {
    return new watch_stream::Refused(ToGrpc(core::InvalidFieldError(
        "request",
        absl::StrCat("must be a ", Face::Request::descriptor()->name()))));
  }
  absl::StatusOr<Filter> filter = Admit(services, context, request);
  if (!filter.ok())
    return new watch_stream::Refused(ToGrpc(filter.status()));
  auto *stream =
      new WatchStream(parts, *std::move(filter), request.resume_version());
  if (services.metrics != nullptr)
    services.metrics->WatchStreamStarted();
  parts.pool->Submit([stream] {
    stream->Open();
    stream->Release();
  });
  return stream;
}

template <typename Face> void WatchStream<Face>::Open() {
  if (resume_version_ > 0) {
    if (absl::Status s = CatchUpAndJoin(resume_version_, true); !s.ok())
      outbox_.End(s);
    return;
  }
  absl::StatusOr<watch::BasicListing<Kind>> listing =
      Face::HistoryOf(scheduler()).List(filter_);
  if (!listing.ok()) {
    outbox_.End(listing.status());
    return;
  }
  const auto &all = listing->records;
  for (size_t from = 0; from < all.size(); from += watch_stream::kListingPage) {
    Batch page{watch::BatchKind::kExisting, 0, {}, nullptr};
    for (size_t i = from;
         i < all.size() && i < from + watch_stream::kListingPage; ++i) {
      page.changes.push_back({Kind::What::kExisting, false, all[i]});
    }
    if (!outbox_.Put(std::move(page)))
      return;
  }
  if (!outbox_.Put({watch::BatchKind::kSynced, listing->version, {}, nullptr}))
    return;
  if (absl::Status s = CatchUpAndJoin(listing->version, false); !s.ok())
    outbox_.End(s);
}

template <typename Face>
absl::Status WatchStream<Face>::CatchUpAndJoin(int64_t cursor,
                                               bool check_resume) {
  watch::BasicFanout<Kind> &fanout = Face::FanoutOf(scheduler());
  while (true) {
    if (!check_resume) {
      auto joined =
          fanout.Join(&outbox_, filter_, cursor, scheduler().clock()());
      if (joined.id) {
        bool done = false;
        {
          absl::MutexLock lock(&mu_);
          done = done_;
          if (!done)
            member_ = joined.id;
        }
        // Not under mu_: the fanout's lock comes first (it calls Pump).
        if (done)
          fanout.Leave(*joined.id); // OnDone came first.
        return absl::OkStatus();
      }
    }
    absl::StatusOr<watch::BasicHistoryRead<Kind>> read =
        Face::HistoryOf(scheduler())
            .ReadSince(cursor, watch_stream::kCatchUpPage);
    if (!read.ok())
      return read.status();
    if (check_resume && cursor > read->head)
      return watch_stream::ResumeAhead(cursor, read->head);
    if (!read->reaches)
      return watch_stream::ResumeTooOld(cursor, read->oldest);
    check_resume = false;
    for (const watch::BasicEntry<Kind> &entry : read->entries) {
      if (auto batch = watch::BatchFor(filter_, entry)) {
        if (!outbox_.Put(std::move(*batch)))
          return absl::OkStatus(); // The stream ended.
      }
      cursor = entry.version;
    }
  }
}

template <typename Face>
grpc::ByteBuffer WatchStream<Face>::Serialized(const Batch &batch) {
  typename Face::Response message;
  message.set_kind(
      watch_stream::KindToProto<typename Face::Response>(batch.kind));
  message.set_version(batch.version);
  const int64_t version =
      batch.kind == watch::BatchKind::kChanges ? batch.version : 0;
  for (const auto &change : batch.changes) {
    Face::ChangeToProto(change, version, message.add_changes());
  }
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  (void)grpc::SerializationTraits<typename Face::Response>::Serialize(
      message, &bytes, &own_buffer);
  return bytes;
}

template <typename Face>
grpc::ByteBuffer WatchStream<Face>::EncodedOne(const Batch &batch) {
  if (batch.memo == nullptr)
    return Serialized(batch);
  absl::MutexLock lock(&batch.memo->mu);
  if (batch.memo->encoded == nullptr) {
    batch.memo->encoded =
        std::make_shared<const grpc::ByteBuffer>(Serialized(batch));
  }
  // A copy shares the slices.
  return *std::static_pointer_cast<const grpc::ByteBuffer>(batch.memo->encoded);
}

template <typename Face>
grpc::ByteBuffer WatchStream<Face>::Encoded(const std::vector<Batch> &batches) {
  if (batches.size() == 1)
    return EncodedOne(batches.front());
  // Each batch's shared encoding is reused as it is.
  std::vector<grpc::ByteBuffer> messages;
  messages.reserve(batches.size());
  for (const Batch &batch : batches)
    messages.push_back(EncodedOne(batch));
  return watch_stream::Concatenated(messages);
}

template <typename Face> void WatchStream<Face>::Pump() {
  std::optional<absl::Status> end;
  std::vector<Batch> batches;
  bool more = false;
  {
    absl::MutexLock lock(&mu_);
    if (writing_ || finished_)
      return;
    auto run = outbox_.TakeRun(watch_stream::kChangesPerMessage);
    if (run.end) {
      finished_ = true;
      end = std::move(run.end);
      end_reason_ = watch_stream::EndReasonOf(*end);
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
    this->Finish(ToGrpc(*end));
  } else if (more) {
    // The next write follows at once and flushes both: one send, not two.
    this->StartWrite(&message_, grpc::WriteOptions().set_buffer_hint());
  } else {
    this->StartWrite(&message_);
  }
}

template <typename Face> void WatchStream<Face>::OnWriteDone(bool ok) {
  bool finish = false;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok && !finished_) { // The client went away.
      finished_ = true;
      finish = true;
    }
  }
  if (finish) {
    this->Finish(grpc::Status::OK);
    return;
  }
  if (message_version_ > 0)
    outbox_.Sent(message_version_);
  Pump();
}

template <typename Face> void WatchStream<Face>::OnCancel() {
  bool finish = false;
  {
    absl::MutexLock lock(&mu_);
    if (!writing_ && !finished_) {
      finished_ = true;
      finish = true;
    }
  }
  outbox_.Close(); // The opening work stops waiting for room.
  if (finish)
    this->Finish(grpc::Status::CANCELLED);
}

template <typename Face> void WatchStream<Face>::OnDone() {
  std::optional<watch::Fanout::Id> member;
  const char *reason = nullptr;
  {
    absl::MutexLock lock(&mu_);
    done_ = true;
    member = member_;
    reason = end_reason_;
  }
  if (parts_.services->metrics != nullptr)
    parts_.services->metrics->WatchStreamEnded(reason);
  if (member)
    Face::FanoutOf(scheduler()).Leave(*member);
  outbox_.Close();
  Release();
}

template <typename Face> void WatchStream<Face>::Release() {
  if (holders_.fetch_sub(1) == 1)
    delete this;
}

} // namespace wsched::grpc_api

#endif // WSCHED_SERVER_GRPC_WATCH_STREAM_H_
