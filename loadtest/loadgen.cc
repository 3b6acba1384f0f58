// wsched-loadgen: drives PlacementService.PlaceWorkspace (and optionally
// StopWorkspace) from N client threads and reports throughput and latency.
//
//   wsched-loadgen --server=127.0.0.1:50051 --token=CP_TOKEN --agent_token=AGENT_TOKEN
//       --setup_nodes=200 --mix=gpu-1x=0.5,standard=0.5 --concurrency=8 --duration=20s
//
// Each client thread runs one request at a time (closed loop), so
// --concurrency is the number of requests in flight. It always stops by
// itself: after --duration, or after --requests placements (bounded by
// --max_duration). Output: a human table on stdout, then one JSON line
// (the last line, starting with '{') for scripts.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "loadtest/fake_cluster.h"
#include "loadtest/code_name.h"
#include "loadtest/latency.h"
#include "loadtest/pending_readers.h"
#include "server/grpc/channel_credentials.h"
#include "nlohmann/json.hpp"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "wsched-server gRPC address");
ABSL_FLAG(std::string, token, "",
          "bearer token with the control-plane role (PlaceWorkspace, StopWorkspace); "
          "default $WSCHED_TOKEN");
ABSL_FLAG(std::string, agent_token, "",
          "bearer token with the agent or admin role, for --setup_nodes; default --token");
ABSL_FLAG(int, concurrency, 8, "client threads, each with one request in flight");
ABSL_FLAG(double, rate, 0,
          "open loop: start PlaceWorkspace calls at this fixed rate (calls/s) whatever the "
          "answers' latency, each timed from when it was due, so time spent waiting for a free "
          "client thread counts too (give --concurrency enough threads); 0 = closed loop");
ABSL_FLAG(int, channels, 0,
          "gRPC channels (TCP connections) shared round-robin by the threads; "
          "0 = one per thread, 1 = one shared by all");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10),
          "how long to send requests (ignored when --requests is set)");
ABSL_FLAG(absl::Duration, warmup, absl::ZeroDuration(),
          "send load for this long first and leave it out of every number (a fresh server's "
          "first calls fill its caches and its database connections')");
ABSL_FLAG(std::string, latency_trace, "",
          "write one line per successful PlaceWorkspace to this file: when it began (ms since "
          "the load started; for --rate, when it was due) and its latency in ms, to see when "
          "slow calls happened");
ABSL_FLAG(int64_t, requests, 0, "stop after this many PlaceWorkspace calls; 0 = use --duration");
ABSL_FLAG(absl::Duration, max_duration, absl::Minutes(10),
          "hard limit on the measured phase, whatever --requests says");
ABSL_FLAG(absl::Duration, rpc_timeout, absl::Seconds(10), "deadline of each RPC");
ABSL_FLAG(int, setup_nodes, 0,
          "register this many fake nodes first (CPU nodes in --cpu_pool, 8-GPU H100 nodes in "
          "--gpu_pool), named <run_id>-cpu-<i> / <run_id>-gpu-<i>");
ABSL_FLAG(bool, setup_only, false, "register the --setup_nodes and exit without placing");
ABSL_FLAG(double, gpu_node_share, -1,
          "share of --setup_nodes that are GPU nodes; -1 = the mix weight of classes whose id "
          "starts with \"gpu\"");
ABSL_FLAG(std::string, cpu_pool, "general", "pool of the fake CPU nodes");
ABSL_FLAG(std::string, gpu_pool, "gpu-h100", "pool of the fake GPU nodes");
ABSL_FLAG(std::string, mix, "standard=1",
          "classes to place with relative weights, e.g. gpu-1x=0.5,standard=0.5");
ABSL_FLAG(int, pending_readers, 0,
          "threads that read one pending workspace (GetWorkspace: its reason and proven fixes) "
          "over and over beside the placements; 0 = none");
ABSL_FLAG(std::string, pending_view, "basic",
          "what the --pending_readers ask for: basic (what a poll asks: reason and estimate) or "
          "full (also the proven fixes)");
ABSL_FLAG(double, pending_reads_per_s, 0,
          "each pending reader's pace in reads per second, as a control plane polls; 0 = call "
          "again as soon as answered");
ABSL_FLAG(std::string, pending_class, "gpu-8x-vm",
          "class of the workspace the --pending_readers read; it must stay pending on the fleet");
ABSL_FLAG(bool, stop_after_place, false,
          "stop each workspace right after it is placed (capacity never runs out); a "
          "place+stop cycle is 2 requests; place latency is reported separately");
ABSL_FLAG(std::string, run_id, "",
          "prefix of node and workspace names (lowercase DNS label); default random");
ABSL_FLAG(std::string, org, "loadtest-org", "org_id of the placed workspaces");
ABSL_FLAG(std::string, project, "loadtest-project", "project_id of the placed workspaces");
ABSL_FLAG(bool, tls, false, "connect with TLS (the system's roots unless --tls_ca)");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA bundle to verify the server with (implies --tls)");
ABSL_FLAG(std::string, tls_cert, "", "client certificate for mutual TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "client private key for mutual TLS");
ABSL_FLAG(std::string, tls_server_name, "", "name to verify the server certificate against");

namespace wsched::loadtest {
namespace {

using Clock = std::chrono::steady_clock;

struct MixEntry {
  std::string class_id;
  double weight = 0;
};

absl::StatusOr<std::vector<MixEntry>> ParseMix(const std::string& text) {
  std::vector<MixEntry> mix;
  double total = 0;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(text, ',', absl::SkipWhitespace()))) {
    std::vector<std::string> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    MixEntry entry;
    entry.class_id = std::string(absl::StripAsciiWhitespace(kv[0]));
    entry.weight = 1;
    if (kv.size() == 2 && !absl::SimpleAtod(kv[1], &entry.weight)) {
      return absl::InvalidArgumentError(absl::StrCat("--mix: bad weight in \"", part, "\""));
    }
    if (entry.class_id.empty() || entry.weight < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--mix: bad entry \"", part, "\""));
    }
    total += entry.weight;
    mix.push_back(entry);
  }
  if (mix.empty() || total <= 0) {
    return absl::InvalidArgumentError("--mix: needs at least one class with a positive weight");
  }
  for (auto& entry : mix) entry.weight /= total;
  return mix;
}


// What one kind of RPC did: latencies of the successful calls, errors by code.
struct Tally {
  std::vector<int64_t> latency_ns;  // Successful calls only.
  std::vector<int64_t> began_ns;    // Parallel to latency_ns: since the load started.
  std::map<std::string, int64_t> errors;
  std::map<std::string, std::string> first_error;  // Code -> first message.
  int64_t calls = 0;

  void Record(const grpc::Status& status, int64_t ns, int64_t began = 0) {
    ++calls;
    if (status.ok()) {
      latency_ns.push_back(ns);
      began_ns.push_back(began);
      return;
    }
    std::string code = CodeName(status.error_code());
    if (errors[code]++ == 0) first_error[code] = status.error_message();
  }
  void Merge(Tally&& other) {
    latency_ns.insert(latency_ns.end(), other.latency_ns.begin(), other.latency_ns.end());
    began_ns.insert(began_ns.end(), other.began_ns.begin(), other.began_ns.end());
    for (const auto& [code, n] : other.errors) errors[code] += n;
    for (auto& [code, message] : other.first_error) first_error.emplace(code, std::move(message));
    calls += other.calls;
  }
  int64_t ok() const { return static_cast<int64_t>(latency_ns.size()); }
  int64_t error_count() const {
    int64_t n = 0;
    for (const auto& [code, count] : errors) n += count;
    return n;
  }
};

grpc_api::ClientTlsOptions TlsFromFlags() {
  grpc_api::ClientTlsOptions tls;
  tls.tls = absl::GetFlag(FLAGS_tls);
  tls.ca_path = absl::GetFlag(FLAGS_tls_ca);
  tls.cert_path = absl::GetFlag(FLAGS_tls_cert);
  tls.key_path = absl::GetFlag(FLAGS_tls_key);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  return tls;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& server, int index) {
  grpc::ChannelArguments args;
  // Separate channels must not share one TCP connection: gRPC pools
  // subchannels globally by target and arguments.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("wsched.loadgen.channel_index", index);
  return grpc_api::CreateClientChannel(server, TlsFromFlags(), args);
}

std::string RandomRunId() {
  std::random_device random;
  return absl::StrFormat("lg%08x", random());
}

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 40) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

std::unique_ptr<grpc::ClientContext> Context(const std::string& token, absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  return context;
}

// Ends a warm-up cycle's workspace so the measured cycles start from the
// same room; not counted.
void StopQuietly(v1::PlacementService::Stub& stub, const std::string& workspace_id,
                 const std::string& token, absl::Duration timeout) {
  v1::StopWorkspaceRequest request;
  request.set_workspace_id(workspace_id);
  v1::Workspace stopped;
  auto context = Context(token, timeout);
  (void)stub.StopWorkspace(context.get(), request, &stopped);
}

struct SetupResult {
  int cpu_nodes = 0;
  int gpu_nodes = 0;
  double seconds = 0;
  Tally tally;
};

SetupResult RegisterNodes(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                          int threads, int total, double gpu_share, const std::string& run_id,
                          const std::string& token) {
  SetupResult result;
  result.gpu_nodes = std::clamp(static_cast<int>(std::lround(total * gpu_share)), 0, total);
  result.cpu_nodes = total - result.gpu_nodes;
  const std::string cpu_pool = absl::GetFlag(FLAGS_cpu_pool);
  const std::string gpu_pool = absl::GetFlag(FLAGS_gpu_pool);
  const absl::Duration timeout = absl::GetFlag(FLAGS_rpc_timeout);
  std::atomic<int> next{0};
  std::mutex mu;
  auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto stub = v1::InventoryService::NewStub(channels[t % channels.size()]);
      Tally tally;
      for (int i = next++; i < total; i = next++) {
        v1::RegisterNodeRequest request;
        const std::string name = FakeNodeName(run_id, i, result.gpu_nodes);
        if (i < result.gpu_nodes) {
          *request.mutable_node() = GpuNode(name, gpu_pool);
        } else {
          *request.mutable_node() = CpuNode(name, cpu_pool);
        }
        v1::RegisterNodeResponse response;
        auto context = Context(token, timeout);
        auto t0 = Clock::now();
        grpc::Status status = stub->RegisterNode(context.get(), request, &response);
        tally.Record(status, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 Clock::now() - t0).count());
      }
      std::lock_guard<std::mutex> lock(mu);
      result.tally.Merge(std::move(tally));
    });
  }
  for (auto& worker : workers) worker.join();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

struct WorkerResult {
  Tally place;
  Tally stop;
  int64_t placed = 0;
  int64_t pending = 0;
  int64_t warmup_placed = 0;  // During --warmup: only for per-placement costs.
  std::map<std::string, int64_t> placed_by_class;
};

nlohmann::json ErrorsJson(const Tally& tally) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& [code, n] : tally.errors) errors[code] = n;
  return errors;
}

// One "began_ms latency_ms" line per call, in the order they began.
void WriteLatencyTrace(const std::string& path, const Tally& tally, absl::Time started) {
  std::vector<size_t> order(tally.latency_ns.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tally.began_ns[a] < tally.began_ns[b]; });
  std::ofstream out(path);
  out << "# began_ms latency_ms; the load started at " << absl::FormatTime(started) << "\n";
  for (size_t i : order) {
    out << absl::StrFormat("%.3f %.3f\n", tally.began_ns[i] / 1e6, tally.latency_ns[i] / 1e6);
  }
  if (!out) std::fprintf(stderr, "wsched-loadgen: could not write --latency_trace %s\n", path.c_str());
}

nlohmann::json LatencyJson(const Percentiles& p) {
  return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"max", p.max}, {"mean", p.mean}};
}

int Main() {
  const std::string server = absl::GetFlag(FLAGS_server);
  std::string token = absl::GetFlag(FLAGS_token);
  if (token.empty() && std::getenv("WSCHED_TOKEN") != nullptr) token = std::getenv("WSCHED_TOKEN");
  std::string agent_token = absl::GetFlag(FLAGS_agent_token);
  if (agent_token.empty()) agent_token = token;
  const int concurrency = absl::GetFlag(FLAGS_concurrency);
  const int64_t requests = absl::GetFlag(FLAGS_requests);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  const absl::Duration max_duration = absl::GetFlag(FLAGS_max_duration);
  const absl::Duration rpc_timeout = absl::GetFlag(FLAGS_rpc_timeout);
  const bool stop_after_place = absl::GetFlag(FLAGS_stop_after_place);
  const double rate = absl::GetFlag(FLAGS_rate);
  std::string run_id = absl::GetFlag(FLAGS_run_id);
  if (run_id.empty()) run_id = RandomRunId();

  if (concurrency < 1 || concurrency > 4096) {
    std::cerr << "--concurrency must be 1..4096\n";
    return 2;
  }
  if (rate < 0 || rate > 1e6) {
    std::cerr << "--rate must be 0 (closed loop) to 1000000 calls/s\n";
    return 2;
  }
  const bool setup_only = absl::GetFlag(FLAGS_setup_only);
  if (!setup_only && (requests < 0 || (requests == 0 && duration <= absl::ZeroDuration()) ||
                      max_duration <= absl::ZeroDuration())) {
    std::cerr << "give --duration > 0 or --requests > 0 (and --max_duration > 0)\n";
    return 2;
  }
  if (!IsDnsLabel(run_id)) {
    std::cerr << "--run_id must be a lowercase DNS label of at most 40 characters\n";
    return 2;
  }
  auto mix = ParseMix(absl::GetFlag(FLAGS_mix));
  if (!mix.ok()) {
    std::cerr << mix.status().message() << "\n";
    return 2;
  }

  const int channel_flag = absl::GetFlag(FLAGS_channels);
  const int channel_count = channel_flag <= 0 ? concurrency : std::min(channel_flag, concurrency);
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < channel_count; ++i) {
    auto channel = MakeChannel(server, i);
    if (!channel.ok()) {
      std::cerr << channel.status().message() << "\n";
      return 2;
    }
    channels.push_back(std::move(*channel));
    if (!channels.back()->WaitForConnected(std::chrono::system_clock::now() +
                                           std::chrono::seconds(10))) {
      std::cerr << "cannot connect to " << server << "\n";
      return 1;
    }
  }

  nlohmann::json out;
  out["tool"] = "wsched-loadgen";
  out["server"] = server;
  out["run_id"] = run_id;
  out["concurrency"] = concurrency;
  out["channels"] = channel_count;
  out["mix"] = absl::GetFlag(FLAGS_mix);
  out["stop_after_place"] = stop_after_place;
  out["rate"] = rate;

  const int setup_nodes = absl::GetFlag(FLAGS_setup_nodes);
  if (setup_nodes > 0) {
    double gpu_share = absl::GetFlag(FLAGS_gpu_node_share);
    if (gpu_share < 0) {
      gpu_share = 0;
      for (const auto& entry : *mix) {
        if (entry.class_id.rfind("gpu", 0) == 0) gpu_share += entry.weight;
      }
    }
    SetupResult setup = RegisterNodes(channels, concurrency, setup_nodes, std::min(gpu_share, 1.0),
                                      run_id, agent_token);
    std::printf("setup: registered %lld of %d nodes (%d cpu in %s, %d gpu in %s) in %.2f s\n",
                static_cast<long long>(setup.tally.ok()), setup_nodes, setup.cpu_nodes,
                absl::GetFlag(FLAGS_cpu_pool).c_str(), setup.gpu_nodes,
                absl::GetFlag(FLAGS_gpu_pool).c_str(), setup.seconds);
    out["setup"] = {{"nodes", setup_nodes},         {"cpu_nodes", setup.cpu_nodes},
                    {"gpu_nodes", setup.gpu_nodes}, {"registered", setup.tally.ok()},
                    {"seconds", setup.seconds},     {"errors", ErrorsJson(setup.tally)}};
    if (setup.tally.error_count() > 0) {
      for (const auto& [code, message] : setup.tally.first_error) {
        std::cerr << "RegisterNode " << code << ": " << message << "\n";
      }
      std::cout << out.dump() << "\n";
      return 1;
    }
  }
  if (setup_only) {
    std::cout << out.dump() << std::endl;
    return 0;
  }

  std::vector<double> cumulative;
  double running = 0;
  for (const auto& entry : *mix) cumulative.push_back(running += entry.weight);

  std::unique_ptr<PendingReaders> readers;
  if (const int count = absl::GetFlag(FLAGS_pending_readers); count > 0) {
    PendingReaders::Options options;
    options.token = token;
    options.workspace_id = absl::StrCat(run_id, "-read-pending");
    options.class_id = absl::GetFlag(FLAGS_pending_class);
    options.org_id = absl::GetFlag(FLAGS_org);
    options.project_id = absl::GetFlag(FLAGS_project);
    options.readers = count;
    options.rpc_timeout = rpc_timeout;
    const std::string view = absl::GetFlag(FLAGS_pending_view);
    if (view != "basic" && view != "full") {
      std::cerr << "--pending_view: must be basic or full, not \"" << view << "\"\n";
      return 2;
    }
    options.full_view = view == "full";
    options.reads_per_s = absl::GetFlag(FLAGS_pending_reads_per_s);
    if (options.reads_per_s < 0) {
      std::cerr << "--pending_reads_per_s: must be 0 or more\n";
      return 2;
    }
    if (absl::Status started = PendingReaders::Start(channels[0], options, &readers);
        !started.ok()) {
      std::cerr << started << "\n";
      return 1;
    }
  }

  std::atomic<int64_t> next_request{0};
  std::atomic<bool> stop{false};
  const Clock::time_point start = Clock::now();
  // Calls that begin before `measured_from` are sent but not counted.
  const Clock::time_point measured_from = start + absl::ToChronoNanoseconds(absl::GetFlag(FLAGS_warmup));
  const absl::Time started_at = absl::Now() + absl::GetFlag(FLAGS_warmup);
  const Clock::time_point deadline =
      measured_from + absl::ToChronoNanoseconds(requests > 0 ? max_duration
                                                             : std::min(duration, max_duration));
  // Open loop: call number `seq` is due at start + seq / rate.
  auto due_time = [&](int64_t seq) {
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(static_cast<double>(seq) / rate));
  };
  std::vector<WorkerResult> results(concurrency);
  std::vector<int64_t> late(concurrency, 0);  // Open-loop calls sent 1 ms or more after due.
  std::vector<Clock::time_point> ended(concurrency);
  std::vector<std::thread> workers;
  for (int t = 0; t < concurrency; ++t) {
    workers.emplace_back([&, t] {
      auto stub = v1::PlacementService::NewStub(channels[t % channels.size()]);
      std::mt19937_64 rng(0x5eed + t);
      std::uniform_real_distribution<double> pick(0, 1);
      WorkerResult& r = results[t];
      while (!stop.load(std::memory_order_relaxed)) {
        if (Clock::now() >= deadline) break;
        int64_t seq = next_request.fetch_add(1);
        if (requests > 0 && seq >= requests) break;
        Clock::time_point due{};
        if (rate > 0) {
          due = due_time(seq);
          if (due >= deadline) break;
          std::this_thread::sleep_until(due);
          if (due >= measured_from && Clock::now() - due >= std::chrono::milliseconds(1)) ++late[t];
        }
        double u = pick(rng);
        size_t k = 0;
        while (k + 1 < cumulative.size() && u >= cumulative[k]) ++k;
        const std::string& class_id = (*mix)[k].class_id;
        v1::PlaceWorkspaceRequest request;
        request.set_workspace_id(absl::StrCat(run_id, "-w", seq));
        request.set_org_id(absl::GetFlag(FLAGS_org));
        request.set_project_id(absl::GetFlag(FLAGS_project));
        request.set_user_id(absl::StrCat("user-", t));
        request.set_class_id(class_id);
        v1::Workspace placed;
        auto context = Context(token, rpc_timeout);
        auto t0 = rate > 0 ? due : Clock::now();
        grpc::Status status = stub->PlaceWorkspace(context.get(), request, &placed);
        auto t1 = Clock::now();
        if (t0 < measured_from) {
          if (status.ok() && placed.state() == v1::WORKSPACE_STATE_PLACED) ++r.warmup_placed;
          if (stop_after_place && status.ok()) StopQuietly(*stub, request.workspace_id(), token, rpc_timeout);
          continue;
        }
        r.place.Record(status, std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count(),
                       std::chrono::duration_cast<std::chrono::nanoseconds>(t0 - measured_from).count());
        if (!status.ok()) continue;
        if (placed.state() == v1::WORKSPACE_STATE_PLACED) {
          ++r.placed;
          ++r.placed_by_class[class_id];
        } else if (placed.state() == v1::WORKSPACE_STATE_PENDING) {
          ++r.pending;
        }
        if (stop_after_place) {
          v1::StopWorkspaceRequest stop_request;
          stop_request.set_workspace_id(request.workspace_id());
          v1::Workspace stopped;
          auto stop_context = Context(token, rpc_timeout);
          auto s0 = Clock::now();
          grpc::Status stop_status = stub->StopWorkspace(stop_context.get(), stop_request, &stopped);
          r.stop.Record(stop_status, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         Clock::now() - s0).count());
        }
      }
      ended[t] = Clock::now();
    });
  }
  for (auto& worker : workers) worker.join();
  std::optional<PendingReads> reads;
  if (readers) reads = readers->Finish();
  const Clock::time_point end = *std::max_element(ended.begin(), ended.end());
  const double seconds = std::chrono::duration<double>(end - measured_from).count();

  WorkerResult all;
  for (auto& r : results) {
    all.place.Merge(std::move(r.place));
    all.stop.Merge(std::move(r.stop));
    all.placed += r.placed;
    all.pending += r.pending;
    all.warmup_placed += r.warmup_placed;
    for (const auto& [cls, n] : r.placed_by_class) all.placed_by_class[cls] += n;
  }
  if (const std::string trace = absl::GetFlag(FLAGS_latency_trace); !trace.empty()) {
    WriteLatencyTrace(trace, all.place, started_at);  // Before Summarize sorts the latencies.
  }
  Percentiles place = Summarize(all.place.latency_ns);
  Percentiles stop_latency = Summarize(all.stop.latency_ns);
  const double placed_per_s = all.placed / seconds;
  const double requests_per_s = (all.place.calls + all.stop.calls) / seconds;
  int64_t late_sends = 0;
  for (int64_t n : late) late_sends += n;

  std::printf("\nwsched-loadgen  server=%s  concurrency=%d  channels=%d  mix=%s%s\n",
              server.c_str(), concurrency, channel_count, absl::GetFlag(FLAGS_mix).c_str(),
              stop_after_place ? "  stop_after_place" : "");
  std::printf("elapsed                  %10.2f s", seconds);
  if (absl::GetFlag(FLAGS_warmup) > absl::ZeroDuration()) {
    std::printf(" after a %s warm-up (%lld placed, not counted)", absl::FormatDuration(absl::GetFlag(FLAGS_warmup)).c_str(),
                static_cast<long long>(all.warmup_placed));
  }
  std::printf("\n");
  std::printf("PlaceWorkspace calls     %10lld   ok %lld (placed %lld, pending %lld), errors %lld\n",
              static_cast<long long>(all.place.calls), static_cast<long long>(all.place.ok()),
              static_cast<long long>(all.placed), static_cast<long long>(all.pending),
              static_cast<long long>(all.place.error_count()));
  if (stop_after_place) {
    std::printf("StopWorkspace calls      %10lld   ok %lld, errors %lld\n",
                static_cast<long long>(all.stop.calls), static_cast<long long>(all.stop.ok()),
                static_cast<long long>(all.stop.error_count()));
  }
  if (rate > 0) {
    std::printf("open loop                %10.1f calls/s offered; %lld of %lld sent 1 ms or more "
                "after due (every client thread busy, or woken late)\n",
                rate, static_cast<long long>(late_sends), static_cast<long long>(all.place.calls));
  }
  std::printf("placements/s             %10.1f\n", placed_per_s);
  std::printf("requests/s (all RPCs)    %10.1f\n", requests_per_s);
  std::printf("%-24s %9s %9s %9s %9s %9s\n", "latency ms", "p50", "p90", "p99", "max", "mean");
  std::printf("%-24s %9.3f %9.3f %9.3f %9.3f %9.3f\n", "PlaceWorkspace", place.p50, place.p90,
              place.p99, place.max, place.mean);
  if (stop_after_place) {
    std::printf("%-24s %9.3f %9.3f %9.3f %9.3f %9.3f\n", "StopWorkspace", stop_latency.p50,
                stop_latency.p90, stop_latency.p99, stop_latency.max, stop_latency.mean);
  }
  for (const auto* tally : {&all.place, &all.stop}) {
    for (const auto& [code, n] : tally->errors) {
      std::printf("error %-18s %10lld   first: %s\n", code.c_str(), static_cast<long long>(n),
                  tally->first_error.at(code).c_str());
    }
  }

  if (reads) {
    Percentiles read = Summarize(reads->latency_ns);
    std::printf("GetWorkspace (pending)   %10lld   %.1f/s by %d readers, errors %lld, %lld fixes; "
                "reason: %s\n",
                static_cast<long long>(reads->calls), reads->calls / reads->seconds,
                absl::GetFlag(FLAGS_pending_readers), static_cast<long long>(reads->errors),
                static_cast<long long>(reads->fixes), reads->pending_reason.c_str());
    std::printf("%-24s %9.3f %9.3f %9.3f %9.3f %9.3f\n", "GetWorkspace (pending)", read.p50,
                read.p90, read.p99, read.max, read.mean);
    if (reads->errors > 0) std::printf("first read error: %s\n", reads->first_error.c_str());
    out["pending_reads"] = {{"calls", reads->calls},
                            {"per_s", reads->calls / reads->seconds},
                            {"readers", absl::GetFlag(FLAGS_pending_readers)},
                            {"view", absl::GetFlag(FLAGS_pending_view)},
                            {"paced_per_s", absl::GetFlag(FLAGS_pending_reads_per_s)},
                            {"errors", reads->errors},
                            {"fixes", reads->fixes},
                            {"latency_ms", LatencyJson(read)}};
  }

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double client_cpu_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
                              usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  std::printf("loadgen CPU              %10.2f s (whole process, setup included)\n", client_cpu_s);

  out["seconds"] = seconds;
  out["client_cpu_s"] = client_cpu_s;
  out["placements_per_s"] = placed_per_s;
  out["requests_per_s"] = requests_per_s;
  if (rate > 0) out["late_sends"] = late_sends;
  // Costs measured around the whole run (CPU, commits) divide by both.
  out["warmup"] = {{"seconds", absl::ToDoubleSeconds(absl::GetFlag(FLAGS_warmup))},
                   {"placed", all.warmup_placed}};
  nlohmann::json by_class = nlohmann::json::object();
  for (const auto& [cls, n] : all.placed_by_class) by_class[cls] = n;
  out["place"] = {{"requests", all.place.calls}, {"ok", all.place.ok()},
                  {"placed", all.placed},        {"pending", all.pending},
                  {"placed_by_class", by_class}, {"errors", ErrorsJson(all.place)},
                  {"latency_ms", LatencyJson(place)}};
  if (stop_after_place) {
    out["stop"] = {{"requests", all.stop.calls},
                   {"ok", all.stop.ok()},
                   {"errors", ErrorsJson(all.stop)},
                   {"latency_ms", LatencyJson(stop_latency)}};
  }
  std::cout << out.dump() << std::endl;
  return all.placed > 0 ? 0 : 1;
}

}  // namespace
}  // namespace wsched::loadtest

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "wsched-loadgen: load generator for wsched-server's PlaceWorkspace (see loadtest/)");
  absl::ParseCommandLine(argc, argv);
  return wsched::loadtest::Main();
}
