// wsched.v1.UsageService: the usage ledger (docs/billing.md), listed and
// summed. Admins and the control plane read all of it; project owners the
// usage of their own orgs and projects (Principal::CoversProject). The
// ledger's rules are the application's (app/usage_operations.h).
#ifndef WSCHED_SERVER_GRPC_USAGE_SERVICE_H_
#define WSCHED_SERVER_GRPC_USAGE_SERVICE_H_

#include "server/app/usage_operations.h"
#include "server/grpc/principal.h"
#include "server/grpc/service_context.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace wsched::grpc_api {

// What `who` may read of the ledger: everything for admins and the control
// plane, else its projects, or its orgs when it names no projects (the rule
// of Principal::CoversProject, as a filter).
app::UsageScope UsageScopeOf(const Principal& who);

class UsageServiceImpl final : public v1::UsageService::Service {
 public:
  explicit UsageServiceImpl(const ServiceContext& context) : context_(context) {}

  grpc::Status ListUsage(grpc::ServerContext* context, const v1::ListUsageRequest* request,
                         v1::ListUsageResponse* response) override;
  grpc::Status SummarizeUsage(grpc::ServerContext* context,
                              const v1::SummarizeUsageRequest* request,
                              v1::SummarizeUsageResponse* response) override;
  // An org's forecast needs a caller who sees the whole org: one scoped to
  // some of its projects reads those projects' forecasts.
  grpc::Status GetSpendingForecast(grpc::ServerContext* context,
                                   const v1::GetSpendingForecastRequest* request,
                                   v1::GetSpendingForecastResponse* response) override;

 private:
  const ServiceContext context_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_USAGE_SERVICE_H_
