// wsched-watch-load: holds many PlacementService.WatchWorkspaces streams
// open at once and measures how fast committed changes reach them.
//
//   wsched-watch-load --server=127.0.0.1:50051 --token=CP_TOKEN --watchers=10000
//       --channels=50 --matching=100 --duration=0     # until SIGTERM / SIGINT
//
// The streams are gRPC callback reactors spread round-robin over --channels
// separate HTTP/2 connections (no thread per stream). --matching of them
// have an empty filter and see every change; the others filter on
// --idle_project, a project the load never uses, so they stay registered
// but idle, as most of a real fleet's watchers would. So that 10,000
// listings do not all hit the database, watcher 0 alone lists (resume
// version 0, with its own filter) and reads until SYNCED; every other
// watcher resumes from that version.
//
// Readiness: a stream that resumed sends nothing until something it
// matches happens, so once every stream has been started the tool places
// one "ping" workspace (--ping_class) in --idle_project: every stream but
// a node's matches it, and a stream that has received anything (the ping;
// for a node's stream, its first bookmark, within the server's
// --watch_bookmark_interval) is open (joined the server's fanout, or is
// catching up to it). When all are, it prints
//   ready streams=N watchers=N failed=0 open_s=...
// and starts counting: what came before is left out of every figure.
//
// Delivery delay, per received change whose `what` is PLACED: the
// receiving wall clock minus workspace.placed_at (PostgreSQL's now() of
// the placing transaction, so it includes the rest of that transaction and
// its commit; client and server must share a clock).
//
// --stalled adds streams that hang: each on its own connection with small
// HTTP/2 windows that do not grow, seeing every change, and reading
// nothing once they have the ping, as a client that stopped reading would.
// The server must end them (WATCH_TOO_SLOW) without slowing placements or
// the other streams. At the end they read again, which lets the server's
// refusal through; how they ended is stalled_codes in the result (only
// they count there, not in streams_failed).
//
// After --duration from ready (0: only on SIGTERM / SIGINT) it cancels
// every stream and prints one line of key=value for scripts (the last
// line, starting with "result"):
//   result watchers=N streams_open=N streams_failed=0 failed_codes= events_delivered=...
//     placed_events=... bookmarks=... messages=... delay_p50_ms=... delay_p90_ms=...
//     delay_p99_ms=... delay_max_ms=... delay_mean_ms=... seconds=... client_cpu_s=...
//     client_rss_kb=... stalled=N stalled_codes=...
// and, on stderr, the first message of each failure code.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <condition_variable>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "loadtest/code_name.h"
#include "loadtest/latency.h"
#include "server/grpc/channel_credentials.h"
#include "wsched/v1/placement.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "wsched-server gRPC address");
ABSL_FLAG(std::string, token, "",
          "bearer token with the control-plane role (WatchWorkspaces, and PlaceWorkspace for "
          "the ping); default $WSCHED_TOKEN");
ABSL_FLAG(int, watchers, 10000, "WatchWorkspaces streams to hold open");
ABSL_FLAG(int, channels, 50, "gRPC channels (separate HTTP/2 connections) the streams share");
ABSL_FLAG(int, matching, 100,
          "streams with an empty filter (every change); the others filter on --idle_project");
ABSL_FLAG(std::vector<std::string>, node_filters, {},
          "node names: one more stream filters on each (as a node's agent would), taken from "
          "those that would filter on --idle_project");
ABSL_FLAG(int, stalled, 0,
          "extra streams that stop reading once open, each on its own connection (see above)");
ABSL_FLAG(std::string, idle_project, "watch-load-idle",
          "project_id the non-matching streams filter on: one the load never places in");
ABSL_FLAG(std::string, ping_class, "standard",
          "class of the one workspace placed in --idle_project to find every stream open");
ABSL_FLAG(std::string, ping_org, "watch-load-org", "org_id of the ping workspace");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(60),
          "how long to measure after every stream is open; 0 = until SIGTERM or SIGINT");
ABSL_FLAG(absl::Duration, open_timeout, absl::Minutes(3),
          "give up waiting for every stream to open after this long (the figures then cover "
          "the streams that did)");
ABSL_FLAG(absl::Duration, progress_every, absl::ZeroDuration(),
          "print a progress line on stderr this often; 0 = never");
ABSL_FLAG(std::string, run_id, "", "names the ping workspace (<run_id>-ping); default random");
ABSL_FLAG(bool, tls, false, "connect with TLS (the system's roots unless --tls_ca)");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA bundle to verify the server with (implies --tls)");
ABSL_FLAG(std::string, tls_cert, "", "client certificate for mutual TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "client private key for mutual TLS");
ABSL_FLAG(std::string, tls_server_name, "", "name to verify the server certificate against");

namespace wsched::loadtest {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_signalled{false};
extern "C" void OnSignal(int) { g_signalled.store(true); }


// What every stream adds to, from any gRPC callback thread.
struct Shared {
  std::string token;
  std::string ping_id;

  std::atomic<bool> measuring{false};  // From "ready" on.
  std::atomic<bool> stopping{false};   // Our own cancellation began.
  std::atomic<int> pinged{0};          // Streams that received the ping.
  std::atomic<int> done{0};            // OnDone ran.
  std::atomic<int> failed{0};          // Ended by the server or the transport, not by us.
  std::atomic<int> failed_after_ping{0};

  // Counted while measuring.
  std::atomic<int64_t> events{0};  // Changes in CHANGES messages.
  std::atomic<int64_t> placed_events{0};
  std::atomic<int64_t> bookmarks{0};
  std::atomic<int64_t> messages{0};
  std::atomic<int64_t> negative_delays{0};

  std::mutex mu;
  std::vector<int64_t> delays_ns;  // Per PLACED change, while measuring.
  std::map<std::string, int> failures;
  std::map<std::string, std::string> first_failure;

  // The lister's SYNCED version (0 until then), or its failure.
  std::mutex synced_mu;
  std::condition_variable synced_cv;
  int64_t synced_version = 0;
  bool lister_failed = false;
};

class Watcher final : public grpc::ClientReadReactor<v1::WatchWorkspacesResponse> {
 public:
  Watcher(Shared* shared, bool lister, bool stalls = false)
      : shared_(shared), lister_(lister), stalls_(stalls) {}

  void Start(v1::PlacementService::Stub* stub, const v1::WorkspaceWatchFilter& filter,
             int64_t resume_version) {
    if (!shared_->token.empty()) context_.AddMetadata("authorization", "Bearer " + shared_->token);
    *request_.mutable_filter() = filter;
    request_.set_resume_version(resume_version);
    stub->async()->WatchWorkspaces(&context_, &request_, this);
    StartRead(&response_);
    StartCall();
  }

  void Cancel() { context_.TryCancel(); }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // The stream ended: OnDone says how.
    Handle(response_);
    if (stalls_ && pinged_) {
      // Hangs until Unstall; one of the two restarts reading, never both.
      parked_.store(true);
      if (!shared_->stopping.load() || !parked_.exchange(false)) return;
    }
    StartRead(&response_);
  }

  // A stalled stream reads again (after stopping was set), so that how the
  // server ended it gets through.
  void Unstall() {
    if (parked_.exchange(false)) StartRead(&response_);
  }
  bool done() const { return done_.load(); }
  const std::string& end_code() const { return end_code_; }  // After done().

  void OnDone(const grpc::Status& status) override {
    const bool ours = shared_->stopping.load() && status.error_code() == grpc::CANCELLED;
    end_code_ = CodeName(status.error_code());
    if (stalls_) {
      done_.store(true);
      return;
    }
    if (!ours) {
      // Ended by the server (even with OK) or the transport: a failure.
      std::string code = CodeName(status.error_code());
      {
        std::lock_guard<std::mutex> lock(shared_->mu);
        if (shared_->failures[code]++ == 0) shared_->first_failure[code] = status.error_message();
      }
      shared_->failed.fetch_add(1);
      if (pinged_) shared_->failed_after_ping.fetch_add(1);
      if (lister_ && !synced_) {
        std::lock_guard<std::mutex> lock(shared_->synced_mu);
        shared_->lister_failed = true;
        shared_->synced_cv.notify_all();
      }
    }
    shared_->done.fetch_add(1);
  }

 private:
  void Handle(const v1::WatchWorkspacesResponse& message) {
    const int64_t now_ns = absl::GetCurrentTimeNanos();
    // A stalled stream's few messages are no delivery figure.
    const bool measuring = !stalls_ && shared_->measuring.load(std::memory_order_relaxed);
    // Anything the server sends a resumed stream means it serves it: the
    // ping, or for a stream the ping does not match (a node's), a bookmark.
    if (!pinged_) {
      pinged_ = true;
      shared_->pinged.fetch_add(1);
    }
    switch (message.kind()) {
      case v1::WatchWorkspacesResponse::KIND_SYNCED:
        if (lister_ && !synced_) {
          synced_ = true;
          std::lock_guard<std::mutex> lock(shared_->synced_mu);
          shared_->synced_version = message.version();
          shared_->synced_cv.notify_all();
        }
        break;
      case v1::WatchWorkspacesResponse::KIND_BOOKMARK:
        if (measuring) shared_->bookmarks.fetch_add(1, std::memory_order_relaxed);
        break;
      case v1::WatchWorkspacesResponse::KIND_CHANGES: {
        std::vector<int64_t> delays;
        int64_t placed = 0, negative = 0;
        for (const v1::WorkspaceChange& change : message.changes()) {
          if (!measuring || change.what() != v1::WorkspaceChange::WHAT_PLACED ||
              !change.workspace().has_placed_at()) {
            continue;
          }
          const auto& at = change.workspace().placed_at();
          int64_t delay = now_ns - (at.seconds() * 1'000'000'000LL + at.nanos());
          if (delay < 0) {
            ++negative;
            delay = 0;
          }
          ++placed;
          delays.push_back(delay);
        }
        if (measuring) {
          shared_->events.fetch_add(message.changes_size(), std::memory_order_relaxed);
          shared_->placed_events.fetch_add(placed, std::memory_order_relaxed);
          if (negative > 0) shared_->negative_delays.fetch_add(negative, std::memory_order_relaxed);
          if (!delays.empty()) {
            std::lock_guard<std::mutex> lock(shared_->mu);
            shared_->delays_ns.insert(shared_->delays_ns.end(), delays.begin(), delays.end());
          }
        }
        break;
      }
      default:
        break;  // EXISTING: the lister's listing.
    }
    if (measuring) shared_->messages.fetch_add(1, std::memory_order_relaxed);
  }

  Shared* const shared_;
  const bool lister_;
  const bool stalls_;
  std::atomic<bool> parked_{false};
  std::atomic<bool> done_{false};
  std::string end_code_;
  bool synced_ = false;  // Touched only by this stream's (serialized) callbacks.
  bool pinged_ = false;
  grpc::ClientContext context_;
  v1::WatchWorkspacesRequest request_;
  v1::WatchWorkspacesResponse response_;
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

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

long RssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int Main() {
  const std::string server = absl::GetFlag(FLAGS_server);
  Shared shared;
  shared.token = absl::GetFlag(FLAGS_token);
  if (shared.token.empty() && std::getenv("WSCHED_TOKEN") != nullptr)
    shared.token = std::getenv("WSCHED_TOKEN");
  const int n = absl::GetFlag(FLAGS_watchers);
  const int channel_count = absl::GetFlag(FLAGS_channels);
  const int matching = absl::GetFlag(FLAGS_matching);
  const int stalled_count = absl::GetFlag(FLAGS_stalled);
  const std::string idle_project = absl::GetFlag(FLAGS_idle_project);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  const absl::Duration open_timeout = absl::GetFlag(FLAGS_open_timeout);
  const absl::Duration progress_every = absl::GetFlag(FLAGS_progress_every);
  std::string run_id = absl::GetFlag(FLAGS_run_id);
  if (run_id.empty()) run_id = absl::StrFormat("wl%08x", std::random_device()());
  shared.ping_id = run_id + "-ping";

  if (n < 1 || n > 1'000'000) {
    std::fprintf(stderr, "--watchers must be 1..1000000\n");
    return 2;
  }
  if (channel_count < 1 || channel_count > 10'000) {
    std::fprintf(stderr, "--channels must be 1..10000\n");
    return 2;
  }
  if (matching < 0 || matching > n) {
    std::fprintf(stderr, "--matching must be 0..--watchers\n");
    return 2;
  }
  if (matching + static_cast<int>(absl::GetFlag(FLAGS_node_filters).size()) > n) {
    std::fprintf(stderr, "--matching plus the --node_filters must be at most --watchers\n");
    return 2;
  }
  if (stalled_count < 0 || stalled_count > 1000) {
    std::fprintf(stderr, "--stalled must be 0..1000\n");
    return 2;
  }
  if (duration < absl::ZeroDuration() || open_timeout <= absl::ZeroDuration()) {
    std::fprintf(stderr, "--duration must be >= 0 and --open_timeout > 0\n");
    return 2;
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);

  std::vector<std::unique_ptr<v1::PlacementService::Stub>> stubs;
  for (int i = 0; i < channel_count; ++i) {
    grpc::ChannelArguments args;
    // Separate channels must not share one TCP connection: gRPC pools
    // subchannels globally by target and arguments.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("wsched.watch_load.channel_index", i);
    auto channel = grpc_api::CreateClientChannel(server, TlsFromFlags(), args);
    if (!channel.ok()) {
      std::fprintf(stderr, "%s\n", std::string(channel.status().message()).c_str());
      return 2;
    }
    if (!(*channel)->WaitForConnected(std::chrono::system_clock::now() +
                                      std::chrono::seconds(10))) {
      std::fprintf(stderr, "cannot connect to %s\n", server.c_str());
      return 1;
    }
    stubs.push_back(v1::PlacementService::NewStub(*channel));
  }
  // A stalled stream's own connection, with windows that stay small: what
  // it does not read backs up into the server's buffer for it, not into
  // megabytes of transport windows.
  std::vector<std::unique_ptr<v1::PlacementService::Stub>> stalled_stubs;
  for (int i = 0; i < stalled_count; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("wsched.watch_load.stalled_index", i);
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt("grpc.http2.lookahead_bytes", 1024);
    auto channel = grpc_api::CreateClientChannel(server, TlsFromFlags(), args);
    if (!channel.ok()) {
      std::fprintf(stderr, "%s\n", std::string(channel.status().message()).c_str());
      return 2;
    }
    stalled_stubs.push_back(v1::PlacementService::NewStub(*channel));
  }

  // The last `matching` watchers see everything, the node_filters.size()
  // before them one node each, the others the idle project. Watcher 0
  // lists, with its own filter.
  v1::WorkspaceWatchFilter idle_filter;
  idle_filter.set_project_id(idle_project);
  const v1::WorkspaceWatchFilter every;
  std::vector<v1::WorkspaceWatchFilter> node_filters;
  for (const std::string& node : absl::GetFlag(FLAGS_node_filters)) {
    node_filters.emplace_back().set_node_name(node);
  }
  const int first_node_watcher = n - matching - static_cast<int>(node_filters.size());
  auto filter_of = [&](int i) -> const v1::WorkspaceWatchFilter& {
    if (i >= n - matching) return every;
    if (i >= first_node_watcher) return node_filters[i - first_node_watcher];
    return idle_filter;
  };
  std::vector<std::unique_ptr<Watcher>> watchers;
  watchers.reserve(n);
  for (int i = 0; i < n; ++i) watchers.push_back(std::make_unique<Watcher>(&shared, i == 0));
  std::vector<std::unique_ptr<Watcher>> stalled;
  for (int i = 0; i < stalled_count; ++i)
    stalled.push_back(std::make_unique<Watcher>(&shared, false, /*stalls=*/true));

  auto finish_early = [&](int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);  // Streams may still be open: no orderly gRPC shutdown.
  };

  const Clock::time_point t_open = Clock::now();
  const Clock::time_point open_deadline = t_open + absl::ToChronoNanoseconds(open_timeout);
  watchers[0]->Start(stubs[0].get(), filter_of(0), 0);
  int64_t version = 0;
  {
    std::unique_lock<std::mutex> lock(shared.synced_mu);
    shared.synced_cv.wait_until(lock, open_deadline, [&] {
      return shared.synced_version > 0 || shared.lister_failed;
    });
    version = shared.synced_version;
  }
  if (version <= 0) {
    std::lock_guard<std::mutex> lock(shared.mu);
    for (const auto& [code, message] : shared.first_failure) {
      std::fprintf(stderr, "watch-load: the listing stream failed: %s: %s\n",
                   code.c_str(), message.c_str());
    }
    std::fprintf(stderr, "watch-load: no SYNCED from the listing stream\n");
    finish_early(1);
  }
  const double synced_s = Since(t_open);
  for (int i = 1; i < n; ++i)
    watchers[i]->Start(stubs[i % channel_count].get(), filter_of(i), version);
  for (int i = 0; i < stalled_count; ++i) stalled[i]->Start(stalled_stubs[i].get(), every, version);
  const double started_s = Since(t_open);

  // A ping: one change every stream but a node's matches. It also moves
  // the server's position, so a stream that has had nothing since it
  // joined gets a bookmark one --watch_bookmark_interval later (the server
  // bookmarks only streams that are behind): while some stream has heard
  // nothing, another ping every 5 s.
  int pings = 0;
  auto ping = [&] {
    v1::PlaceWorkspaceRequest request;
    request.set_workspace_id(pings == 0 ? shared.ping_id : absl::StrCat(shared.ping_id, "-", pings));
    ++pings;
    request.set_org_id(absl::GetFlag(FLAGS_ping_org));
    request.set_project_id(idle_project);
    request.set_user_id("watch-load");
    request.set_class_id(absl::GetFlag(FLAGS_ping_class));
    v1::Workspace placed;
    grpc::ClientContext context;
    if (!shared.token.empty()) context.AddMetadata("authorization", "Bearer " + shared.token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    grpc::Status status = stubs[0]->PlaceWorkspace(&context, request, &placed);
    if (!status.ok()) {
      std::fprintf(stderr, "watch-load: placing the ping workspace %s failed: %s: %s\n",
                   request.workspace_id().c_str(), CodeName(status.error_code()).c_str(),
                   status.error_message().c_str());
      finish_early(1);
    }
  };
  ping();
  Clock::time_point next_ping = Clock::now() + std::chrono::seconds(5);

  auto open_now = [&] { return shared.pinged.load() - shared.failed_after_ping.load(); };
  Clock::time_point next_progress = Clock::now() + absl::ToChronoNanoseconds(progress_every);
  while (shared.pinged.load() + shared.failed.load() - shared.failed_after_ping.load() <
             n + stalled_count &&
         Clock::now() < open_deadline && !g_signalled.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (Clock::now() >= next_ping) {
      ping();
      next_ping = Clock::now() + std::chrono::seconds(5);
    }
    if (progress_every > absl::ZeroDuration() && Clock::now() >= next_progress) {
      std::fprintf(stderr, "watch-load: opening: %d of %d open, %d failed, %.1f s\n", open_now(), n,
                   shared.failed.load(), Since(t_open));
      next_progress += absl::ToChronoNanoseconds(progress_every);
    }
  }
  const int ready_streams = open_now() - stalled_count;
  shared.measuring.store(true);
  const double cpu0 = CpuSeconds();
  const Clock::time_point t_ready = Clock::now();
  const long rss_ready = RssKb();
  std::printf("ready streams=%d watchers=%d failed=%d open_s=%.2f synced_s=%.3f started_s=%.3f "
              "version=%lld client_rss_kb=%ld\n",
              ready_streams, n, shared.failed.load(), Since(t_open), synced_s, started_s,
              static_cast<long long>(version), rss_ready);
  std::fflush(stdout);
  if (ready_streams < n) {
    std::fprintf(stderr, "watch-load: only %d of %d streams open after %.1f s\n", ready_streams, n,
                 Since(t_open));
  }

  const Clock::time_point end =
      duration > absl::ZeroDuration() ? t_ready + absl::ToChronoNanoseconds(duration)
                                      : Clock::time_point::max();
  next_progress = Clock::now() + absl::ToChronoNanoseconds(progress_every);
  while (!g_signalled.load() && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (progress_every > absl::ZeroDuration() && Clock::now() >= next_progress) {
      std::fprintf(stderr, "watch-load: %.0f s: %d open, %d failed, %lld events, %lld bookmarks\n",
                   Since(t_ready), open_now(), shared.failed.load(),
                   static_cast<long long>(shared.events.load()),
                   static_cast<long long>(shared.bookmarks.load()));
      next_progress += absl::ToChronoNanoseconds(progress_every);
    }
  }

  // Stop: the figures as they are now, then cancel every stream.
  shared.stopping.store(true);
  shared.measuring.store(false);
  const double seconds = Since(t_ready);
  const double client_cpu = CpuSeconds() - cpu0;
  const int open_at_end = open_now() - stalled_count;
  const int failed = shared.failed.load();
  std::vector<int64_t> delays;
  std::map<std::string, int> failures;
  std::map<std::string, std::string> first_failure;
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    delays.swap(shared.delays_ns);
    failures = shared.failures;
    first_failure = shared.first_failure;
  }
  // The stalled streams read again: how did the server end them?
  for (auto& watcher : stalled) watcher->Unstall();
  const Clock::time_point stalled_deadline = Clock::now() + std::chrono::seconds(15);
  auto all_stalled_done = [&] {
    return std::all_of(stalled.begin(), stalled.end(), [](const auto& w) { return w->done(); });
  };
  while (!all_stalled_done() && Clock::now() < stalled_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::map<std::string, int> stalled_ends;
  for (const auto& watcher : stalled) ++stalled_ends[watcher->done() ? watcher->end_code() : "OPEN"];
  std::vector<std::string> stalled_codes;
  for (const auto& [code, count] : stalled_ends) stalled_codes.push_back(absl::StrCat(code, ":", count));
  const Percentiles p = Summarize(delays);
  std::vector<std::string> codes;
  for (const auto& [code, count] : failures) codes.push_back(absl::StrCat(code, ":", count));
  for (const auto& [code, message] : first_failure) {
    std::fprintf(stderr, "watch-load: streams ended with %s (%d), first: %s\n", code.c_str(),
                 failures[code], message.c_str());
  }
  if (shared.negative_delays.load() > 0) {
    std::fprintf(stderr, "watch-load: %lld changes arrived before their placed_at (clock skew?)\n",
                 static_cast<long long>(shared.negative_delays.load()));
  }
  std::printf("result watchers=%d matching=%d channels=%d streams_open=%d streams_failed=%d "
              "failed_codes=%s events_delivered=%lld placed_events=%lld bookmarks=%lld "
              "messages=%lld delay_p50_ms=%.3f delay_p90_ms=%.3f delay_p99_ms=%.3f "
              "delay_max_ms=%.3f delay_mean_ms=%.3f seconds=%.3f client_cpu_s=%.3f "
              "client_rss_kb=%ld stalled=%d stalled_codes=%s\n",
              n, matching, channel_count, open_at_end, failed,
              codes.empty() ? "-" : absl::StrJoin(codes, ",").c_str(),
              static_cast<long long>(shared.events.load()),
              static_cast<long long>(shared.placed_events.load()),
              static_cast<long long>(shared.bookmarks.load()),
              static_cast<long long>(shared.messages.load()), p.p50, p.p90, p.p99, p.max, p.mean,
              seconds, client_cpu, RssKb(), stalled_count,
              stalled_codes.empty() ? "-" : absl::StrJoin(stalled_codes, ",").c_str());
  std::fflush(stdout);

  for (auto& watcher : stalled) watcher->Cancel();
  while (!all_stalled_done() && Clock::now() < stalled_deadline + std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!all_stalled_done()) finish_early(0);
  for (auto& watcher : watchers) watcher->Cancel();
  const Clock::time_point done_deadline = Clock::now() + std::chrono::seconds(10);
  while (shared.done.load() < n && Clock::now() < done_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (shared.done.load() < n) {
    std::fprintf(stderr, "watch-load: %d streams still open 10 s after cancelling\n",
                 n - shared.done.load());
    finish_early(0);
  }
  watchers.clear();
  return 0;
}

}  // namespace
}  // namespace wsched::loadtest

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "wsched-watch-load: holds many WatchWorkspaces streams open and measures delivery delay "
      "(see loadtest/watchers.sh)");
  absl::ParseCommandLine(argc, argv);
  return wsched::loadtest::Main();
}
