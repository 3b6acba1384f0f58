// wsched.v1.UsageService: the usage ledger (docs/billing.md), listed and
// summed. Admins and the control plane read all of it; project owners the
// usage of their own orgs and projects (Principal::CoversProject).
#ifndef WSCHED_SERVER_GRPC_USAGE_SERVICE_H_
#define WSCHED_SERVER_GRPC_USAGE_SERVICE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "server/grpc/principal.h"
#include "server/grpc/service_context.h"
#include "server/store/usage.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace wsched::grpc_api {

// What `who` may read of the ledger: everything for admins and the control
// plane, else its projects, or its orgs when it names no projects (the rule
// of Principal::CoversProject, as a filter).
store::UsageScope UsageScopeOf(const Principal& who);

// The most rows a summary answers with, and the most buckets it may ask for.
inline constexpr int kMaxUsageSummaryRows = 10'000;
inline constexpr int64_t kMaxUsageBuckets = 10'000;

class UsageServiceImpl final : public v1::UsageService::Service {
 public:
  explicit UsageServiceImpl(const ServiceContext& context) : context_(context) {}

  grpc::Status ListUsage(grpc::ServerContext* context, const v1::ListUsageRequest* request,
                         v1::ListUsageResponse* response) override;
  grpc::Status SummarizeUsage(grpc::ServerContext* context,
                              const v1::SummarizeUsageRequest* request,
                              v1::SummarizeUsageResponse* response) override;

 private:
  // Whether the database knows `zone`; asked once per name (the zone list
  // is read from disk by PostgreSQL, tens of milliseconds).
  absl::StatusOr<bool> KnownTimeZone(const std::string& zone);

  const ServiceContext context_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> known_zones_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_USAGE_SERVICE_H_
