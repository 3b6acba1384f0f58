// wsched-heartbeat-load: agents' heartbeats at a fixed rate, for every node
// that the load generator registered (`wsched-loadgen --setup_nodes=N
// --run_id=ID` names them ID-gpu-0 .. ID-gpu-(G-1), then ID-cpu-0 ..
// ID-cpu-(N-G-1); its setup line and JSON say G, "gpu_nodes"). Each
// heartbeat repeats what the node reported at registration, so nothing
// changes: what it costs is the price of liveness alone.
//
//   wsched-heartbeat-load --server=127.0.0.1:50051 --token=AGENT_TOKEN
//       --run_id=hb --nodes=10000 --gpu_nodes=2000 --rate=1000 --duration=20s
//
// --shard=K/M beats only the nodes whose index is K modulo M (two processes
// with 0/2 and 1/2 share the fleet; stopping one makes half the nodes lost).
//
// Open loop: the send times are fixed in advance (rate / threads per
// thread), so a slow server shows up as latency, not as a lower rate.
// Output: a human summary, then one JSON line for scripts.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "loadtest/fake_cluster.h"
#include "absl/time/time.h"
#include "loadtest/latency.h"
#include "nlohmann/json.hpp"
#include "wsched/v1/inventory.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "wsched-server gRPC address");
ABSL_FLAG(std::string, token, "", "bearer token with the agent or admin role");
ABSL_FLAG(std::string, run_id, "", "the --run_id the nodes were registered with");
ABSL_FLAG(int, nodes, 1000, "nodes the load generator registered (--setup_nodes), round robin");
ABSL_FLAG(int, gpu_nodes, 0, "how many of --nodes are GPU nodes (the load generator's gpu_nodes)");
ABSL_FLAG(std::string, shard, "0/1", "K/M: only the nodes whose index is K modulo M");
ABSL_FLAG(double, rate, 100, "heartbeats per second in all");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "how long to send");
ABSL_FLAG(int, threads, 8, "sending threads");
ABSL_FLAG(std::string, kernel, "5.15.0-91-generic", "kernel_version to report (unchanged)");

namespace wsched::loadtest {
namespace {

using Clock = std::chrono::steady_clock;

struct Sent {
  std::vector<int64_t> latency_ns;
  int64_t errors = 0;
  int64_t reregister = 0;
  std::string first_error;
};

// The names of this shard's nodes, GPU and CPU alike.
std::vector<std::string> ShardNodes(const std::string& run_id, int nodes, int gpu_nodes, int shard,
                                    int shards) {
  std::vector<std::string> names;
  for (int i = shard; i < nodes; i += shards) names.push_back(FakeNodeName(run_id, i, gpu_nodes));
  return names;
}

int Main() {
  const std::string run_id = absl::GetFlag(FLAGS_run_id);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpu_nodes = absl::GetFlag(FLAGS_gpu_nodes);
  const double rate = absl::GetFlag(FLAGS_rate);
  const int threads = absl::GetFlag(FLAGS_threads);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  std::pair<std::string, std::string> shard_text =
      absl::StrSplit(absl::GetFlag(FLAGS_shard), absl::MaxSplits('/', 1));
  int shard = 0, shards = 0;
  if (run_id.empty() || nodes < 1 || gpu_nodes < 0 || gpu_nodes > nodes || rate <= 0 ||
      threads < 1 || duration <= absl::ZeroDuration() ||
      !absl::SimpleAtoi(shard_text.first, &shard) || !absl::SimpleAtoi(shard_text.second, &shards) ||
      shards < 1 || shard < 0 || shard >= shards || shard >= nodes) {
    std::cerr << "give --run_id, --nodes >= 1, 0 <= --gpu_nodes <= --nodes, --rate > 0, "
                 "--threads >= 1, --duration > 0 and --shard=K/M with 0 <= K < M\n";
    return 2;
  }
  const std::vector<std::string> names = ShardNodes(run_id, nodes, gpu_nodes, shard, shards);
  auto channel = grpc::CreateChannel(absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::cerr << "cannot connect to " << absl::GetFlag(FLAGS_server) << "\n";
    return 1;
  }
  const std::string token = absl::GetFlag(FLAGS_token);
  const std::string kernel = absl::GetFlag(FLAGS_kernel);
  const auto interval = std::chrono::nanoseconds(static_cast<int64_t>(1e9 * threads / rate));
  const auto start = Clock::now();
  const auto end = start + absl::ToChronoNanoseconds(duration);
  std::atomic<int64_t> next_node{0};
  std::vector<Sent> sent(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto stub = v1::InventoryService::NewStub(channel);
      // Threads start staggered so the sends spread evenly over time.
      auto due = start + interval * t / threads;
      for (; due < end; due += interval) {
        std::this_thread::sleep_until(due);
        const std::string& name = names[next_node.fetch_add(1) % names.size()];
        v1::HeartbeatRequest request;
        request.set_node_name(name);
        request.set_kernel_version(kernel);
        v1::HeartbeatResponse response;
        grpc::ClientContext context;
        if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        auto t0 = Clock::now();
        grpc::Status status = stub->Heartbeat(&context, request, &response);
        auto t1 = Clock::now();
        Sent& s = sent[t];
        if (!status.ok()) {
          if (s.errors++ == 0) s.first_error = status.error_message();
          continue;
        }
        if (response.reregister()) ++s.reregister;
        // From the planned send time: queueing behind a late send counts.
        s.latency_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - std::min(t0, due)).count());
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  Sent all;
  for (auto& s : sent) {
    all.latency_ns.insert(all.latency_ns.end(), s.latency_ns.begin(), s.latency_ns.end());
    all.errors += s.errors;
    all.reregister += s.reregister;
    if (all.first_error.empty()) all.first_error = s.first_error;
  }
  const int64_t ok = static_cast<int64_t>(all.latency_ns.size());
  Percentiles latency = Summarize(all.latency_ns);
  std::printf("heartbeats ok %lld for %zu nodes in %.2f s = %.1f/s (target %.1f/s), errors %lld, "
              "reregister %lld\n",
              static_cast<long long>(ok), names.size(), seconds, ok / seconds, rate,
              static_cast<long long>(all.errors), static_cast<long long>(all.reregister));
  std::printf("latency ms p50 %.3f p99 %.3f max %.3f\n", latency.p50, latency.p99, latency.max);
  if (all.errors > 0) std::printf("first error: %s\n", all.first_error.c_str());
  nlohmann::json out = {{"tool", "wsched-heartbeat-load"},
                        {"nodes", names.size()},
                        {"ok", ok},
                        {"errors", all.errors},
                        {"reregister", all.reregister},
                        {"seconds", seconds},
                        {"per_s", ok / seconds},
                        {"latency_ms", {{"p50", latency.p50}, {"p99", latency.p99}, {"max", latency.max}}}};
  std::cout << out.dump() << std::endl;
  return all.errors == 0 && all.reregister == 0 ? 0 : 1;
}

}  // namespace
}  // namespace wsched::loadtest

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("wsched-heartbeat-load: unchanged agent heartbeats at a fixed rate");
  absl::ParseCommandLine(argc, argv);
  return wsched::loadtest::Main();
}
