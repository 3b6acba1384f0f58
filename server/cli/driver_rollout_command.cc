#include "server/cli/driver_rollout_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "server/cli/output.h"
#include "server/cli/structured_output.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::cli {
namespace {

constexpr char kUsage[] =
    "usage: wschedctl driver rollout status [POOL]\n"
    "       wschedctl driver rollout pause POOL [REASON]\n"
    "       wschedctl driver rollout resume POOL\n";

std::string StateText(const v1::DriverRollout& rollout) {
  if (rollout.paused()) return "paused";
  if (!rollout.under_way()) return "none";
  return rollout.in_flight_nodes() > 0 || rollout.waiting_nodes() > 0 ? "rolling" : "done";
}

void PrintRollouts(const std::vector<v1::DriverRollout>& rollouts, const Options& options) {
  Table table({"POOL", "STATE", "CANARY", "WAITING", "IN-FLIGHT", "FAILED", "MAX", "REASON"});
  for (const auto& rollout : rollouts) {
    table.Add({rollout.pool(), StateText(rollout), rollout.canary().empty() ? "-" : rollout.canary(),
               absl::StrCat(rollout.waiting_nodes()), absl::StrCat(rollout.in_flight_nodes()),
               absl::StrCat(rollout.failed_nodes()), absl::StrCat(rollout.max_unavailable()),
               rollout.reason().empty() ? "-" : rollout.reason()});
  }
  table.Print("no GPU pools on the host's driver", !options.no_headers);
}

int Status(const Client& client, const std::vector<std::string>& args, const Options& options) {
  if (args.size() > 1) {
    std::cerr << kUsage;
    return 2;
  }
  v1::ListDriverRolloutsRequest request;
  if (!args.empty()) request.set_pool(args[0]);
  v1::ListDriverRolloutsResponse response;
  auto context = client.Context();
  grpc::Status status =
      v1::InventoryService::NewStub(client.channel)->ListDriverRollouts(context.get(), request, &response);
  if (!status.ok()) return Fail("driver rollout status", status);
  if (options.structured()) return PrintStructured(response, options);
  PrintRollouts({response.rollouts().begin(), response.rollouts().end()}, options);
  return 0;
}

int SetPaused(const Client& client, const std::vector<std::string>& args, const Options& options,
              bool paused) {
  if (args.empty() || args.size() > (paused ? 2u : 1u)) {
    std::cerr << kUsage;
    return 2;
  }
  v1::SetDriverRolloutPausedRequest request;
  request.set_pool(args[0]);
  request.set_paused(paused);
  if (args.size() == 2) request.set_reason(args[1]);
  v1::DriverRollout rollout;
  auto context = client.Context();
  grpc::Status status = v1::InventoryService::NewStub(client.channel)
                            ->SetDriverRolloutPaused(context.get(), request, &rollout);
  const char* verb = paused ? "pause" : "resume";
  if (!status.ok()) return Fail(absl::StrCat("driver rollout ", verb, " ", args[0]), status);
  if (options.structured()) return PrintStructured(rollout, options);
  PrintRollouts({rollout}, options);
  return 0;
}

}  // namespace

int DriverCommand(const Client& client, const std::vector<std::string>& args,
                  const Options& options) {
  if (args.size() < 2 || args[0] != "rollout") {
    std::cerr << kUsage;
    return 2;
  }
  const std::vector<std::string> rest(args.begin() + 2, args.end());
  if (args[1] == "status") return Status(client, rest, options);
  if (args[1] == "pause") return SetPaused(client, rest, options, true);
  if (args[1] == "resume") return SetPaused(client, rest, options, false);
  std::cerr << kUsage;
  return 2;
}

}  // namespace wsched::cli
