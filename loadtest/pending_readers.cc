#include "loadtest/pending_readers.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::loadtest {
namespace {

using Clock = std::chrono::steady_clock;

grpc::ClientContext* Authorized(grpc::ClientContext& context, const std::string& token,
                                absl::Duration timeout) {
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return &context;
}

}  // namespace

absl::Status PendingReaders::Start(const std::shared_ptr<grpc::Channel>& channel,
                                   const Options& options, std::unique_ptr<PendingReaders>* out) {
  auto stub = v1::PlacementService::NewStub(channel);
  v1::PlaceWorkspaceRequest request;
  request.set_workspace_id(options.workspace_id);
  request.set_org_id(options.org_id);
  request.set_project_id(options.project_id);
  request.set_user_id("pending-reader");
  request.set_class_id(options.class_id);
  v1::Workspace placed;
  grpc::ClientContext context;
  grpc::Status status = stub->PlaceWorkspace(
      Authorized(context, options.token, options.rpc_timeout), request, &placed);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("placing ", options.workspace_id, " (", options.class_id,
                                     ") to read while pending: ", status.error_message()));
  }
  if (placed.state() != v1::WORKSPACE_STATE_PENDING) {
    return absl::FailedPreconditionError(
        absl::StrCat("--pending_class=", options.class_id,
                     " was placed on this fleet; name a "
                     "class that waits (e.g. one whose pool has no node registered)"));
  }
  std::unique_ptr<PendingReaders> readers(new PendingReaders());
  readers->results_.resize(options.readers);
  readers->started_ = Clock::now();
  for (int t = 0; t < options.readers; ++t) {
    readers->threads_.emplace_back([reader = readers.get(), channel, options, t] {
      auto stub = v1::PlacementService::NewStub(channel);
      PendingReads& r = reader->results_[t];
      v1::GetWorkspaceRequest get;
      get.set_workspace_id(options.workspace_id);
      get.set_view(options.full_view ? v1::WORKSPACE_VIEW_FULL : v1::WORKSPACE_VIEW_BASIC);
      // A paced reader keeps its schedule (a late call is not made up by
      // calling faster): it models a poll every 1/reads_per_s seconds.
      const Clock::duration interval =
          options.reads_per_s > 0
              ? std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(1.0 / options.reads_per_s))
              : Clock::duration::zero();
      Clock::time_point next = Clock::now();
      while (!reader->stop_.load(std::memory_order_relaxed)) {
        if (interval > Clock::duration::zero()) {
          std::this_thread::sleep_until(next);
          next = std::max(next + interval, Clock::now());
        }
        grpc::ClientContext context;
        v1::Workspace w;
        const Clock::time_point t0 = Clock::now();
        grpc::Status status =
            stub->GetWorkspace(Authorized(context, options.token, options.rpc_timeout), get, &w);
        ++r.calls;
        if (!status.ok()) {
          if (r.errors++ == 0) r.first_error = status.error_message();
          continue;
        }
        r.latency_ns.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
        r.fixes = w.fixes_size();
        r.pending_reason = w.pending_reason();
      }
    });
  }
  *out = std::move(readers);
  return absl::OkStatus();
}

PendingReaders::~PendingReaders() {
  stop_ = true;
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

PendingReads PendingReaders::Finish() {
  stop_ = true;
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  PendingReads all;
  all.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  for (PendingReads& r : results_) {
    all.calls += r.calls;
    all.errors += r.errors;
    if (all.first_error.empty()) all.first_error = r.first_error;
    if (!r.pending_reason.empty()) {
      all.fixes = r.fixes;
      all.pending_reason = r.pending_reason;
    }
    all.latency_ns.insert(all.latency_ns.end(), r.latency_ns.begin(), r.latency_ns.end());
  }
  return all;
}

}  // namespace wsched::loadtest
