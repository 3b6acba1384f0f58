#include "server/cli/scaling_commands.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "server/cli/output.h"
#include "server/cli/structured_output.h"
#include "wsched/v1/scaling.grpc.pb.h"

namespace wsched::cli {
namespace {

std::string Reasons(const v1::PoolSignal& signal) {
  std::vector<std::string> reasons;
  for (int reason : signal.reasons()) {
    reasons.push_back(ShortEnumName(v1::ScalingReason_Name(static_cast<v1::ScalingReason>(reason)),
                                    "SCALING_REASON_"));
  }
  return reasons.empty() ? "-" : Join(reasons, ",");
}

std::string Direction(const v1::PoolSignal& signal) {
  if (signal.target_size() > signal.current_size()) return "up";
  if (signal.target_size() < signal.current_size()) return "down";
  return "steady";
}

// A repeated name field as "a,b,c", or "-" when empty.
std::string Names(const google::protobuf::RepeatedPtrField<std::string>& names) {
  return names.empty() ? "-" : Join({names.begin(), names.end()}, ",");
}

std::string Backoff(const v1::PoolSignal& signal) {
  return signal.has_backoff_until() ? TimeText(signal.backoff_until()) : "-";
}

int Show(const Client& client, const Options& options) {
  auto stub = v1::ScalingService::NewStub(client.channel);
  v1::ScalingState state;
  auto context = client.Context();
  grpc::Status status = stub->GetScalingState(context.get(), v1::GetScalingStateRequest(), &state);
  if (!status.ok()) return Fail("scaling", status);
  if (options.structured()) return PrintStructured(state, options);
  // LOST: lost nodes that still hold workspaces; the target counts them as
  // nodes to replace, so they explain a target above the ready nodes.
  Table table({"POOL", "CURRENT", "TARGET", "DIRECTION", "GEN", "REASONS", "REMOVE", "LOST",
               "BACKOFF", "DETAIL"});
  for (const auto& signal : state.pools()) {
    table.Add({signal.pool(), absl::StrCat(signal.current_size()),
               absl::StrCat(signal.target_size()), Direction(signal),
               absl::StrCat(signal.generation()), Reasons(signal), Names(signal.nodes_to_remove()),
               Names(signal.lost_nodes()), Backoff(signal), OrDash(signal.detail())});
  }
  table.Print("no pools", !options.no_headers);
  std::cout << "leader: " << OrDash(state.leader()) << "\n";
  return 0;
}

int Watch(const Client& client, const std::vector<std::string>& pools, const Options& options) {
  auto stub = v1::ScalingService::NewStub(client.channel);
  v1::WatchScalingSignalsRequest request;
  for (const auto& pool : pools) request.add_pools(pool);
  auto context = client.StreamContext();
  auto reader = stub->WatchScalingSignals(context.get(), request);
  v1::PoolSignal signal;
  while (reader->Read(&signal)) {
    if (options.structured()) {
      PrintStructured(signal, options, /*stream=*/true);
      continue;
    }
    std::string line = absl::StrCat(signal.pool(), " gen=", signal.generation(), " ",
                                    signal.current_size(), " -> ", signal.target_size(),
                                    " reasons=", Reasons(signal));
    if (!signal.nodes_to_remove().empty()) {
      absl::StrAppend(&line, " remove=", Names(signal.nodes_to_remove()));
    }
    if (!signal.lost_nodes().empty()) absl::StrAppend(&line, " lost=", Names(signal.lost_nodes()));
    if (signal.has_backoff_until()) absl::StrAppend(&line, " backoff_until=", Backoff(signal));
    if (!signal.detail().empty()) absl::StrAppend(&line, " (", signal.detail(), ")");
    std::cout << line << std::endl;
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return Fail("scaling watch", status);
  return 0;
}

}  // namespace

int ScalingCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options) {
  if (args.empty()) return Show(client, options);
  if (args[0] == "watch") return Watch(client, {args.begin() + 1, args.end()}, options);
  std::cerr << "usage: wschedctl scaling | scaling watch [POOL...]\n";
  return 2;
}

}  // namespace wsched::cli
