#include "server/cli/watch_workspaces_command.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <iostream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/cli/error_details.h"
#include "server/cli/structured_output.h"
#include "server/cli/workspace_commands.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::cli {
namespace {

// Ctrl-C cancels the call instead of killing wschedctl, so a watch ended
// by hand exits 0 like any finished command. A signal handler may do only
// async-signal-safe things: it writes a byte to a pipe, and a thread
// reading the pipe cancels the call. The handler stays until the watch
// ends, and after an interrupt SIGINT is ignored: `timeout -s INT` signals
// the command and then its process group, and the second SIGINT must not
// kill what the first ended cleanly.
class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(grpc::ClientContext* context);
  ~CancelOnInterrupt();
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

  bool interrupted() const { return interrupted_.load(); }

 private:
  std::atomic<bool> interrupted_{false};
  struct sigaction previous_ {};
  bool installed_ = false;
  std::thread waiter_;
};

// The handler's end is [1]; one watch runs at a time.
int interrupt_pipe[2] = {-1, -1};
constexpr char kInterrupted = 'i';
constexpr char kDone = 'q';

extern "C" void OnInterrupt(int) {
  const int saved = errno;  // the interrupted code may be about to read errno
  [[maybe_unused]] ssize_t written = write(interrupt_pipe[1], &kInterrupted, 1);
  errno = saved;
}

CancelOnInterrupt::CancelOnInterrupt(grpc::ClientContext* context) {
  // An ignored SIGINT (a script's background job) stays ignored, as the shell meant.
  if (sigaction(SIGINT, nullptr, &previous_) != 0 || previous_.sa_handler == SIG_IGN) return;
  if (pipe2(interrupt_pipe, O_CLOEXEC) != 0) return;  // Ctrl-C then kills, as elsewhere.
  // A full pipe (no one reads after the first byte) must not block the handler.
  fcntl(interrupt_pipe[1], F_SETFL, O_NONBLOCK);
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  installed_ = sigaction(SIGINT, &action, nullptr) == 0;
  waiter_ = std::thread([this, context] {
    char byte = 0;
    while (read(interrupt_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    if (byte != kInterrupted) return;
    interrupted_ = true;
    context->TryCancel();
  });
}

CancelOnInterrupt::~CancelOnInterrupt() {
  if (installed_) {
    // Interrupted, the command is ending with exit 0: a second SIGINT
    // (`timeout -s INT` sends one to the command, then one to its process
    // group, and may be descheduled in between) must not turn that into a
    // death by signal. Not interrupted: the shell's disposition again.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, interrupted_.load() ? &ignore : &previous_, nullptr);
  }
  if (waiter_.joinable()) {
    [[maybe_unused]] ssize_t written = write(interrupt_pipe[1], &kDone, 1);
    waiter_.join();
  }
  for (int& fd : interrupt_pipe) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

// As typed on a shell line: quoted only when it must be.
std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-.,:/=@%+") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string OutputName(OutputFormat output) {
  switch (output) {
    case OutputFormat::kWide: return "wide";
    case OutputFormat::kJson: return "json";
    case OutputFormat::kYaml: return "yaml";
    case OutputFormat::kTable:
    case OutputFormat::kCsv: break;
  }
  return "";
}

std::string WhatText(const v1::WorkspaceChange& change) {
  switch (change.what()) {
    case v1::WorkspaceChange::WHAT_EXISTING: return "EXISTING";
    case v1::WorkspaceChange::WHAT_PENDING: return "PENDING";
    case v1::WorkspaceChange::WHAT_PLACED: return "PLACED";
    case v1::WorkspaceChange::WHAT_STOPPED: return "STOPPED";
    case v1::WorkspaceChange::WHAT_LOST: return "LOST";
    case v1::WorkspaceChange::WHAT_IDLE_CHANGED:
      // One kind for every event of a placed workspace, and for its end
      // (idle, a GPU used again; a spending limit's warning or threshold).
      switch (change.workspace().event().kind()) {
        case v1::WorkspaceEvent::KIND_IDLE: return "IDLE";
        case v1::WorkspaceEvent::KIND_BUDGET_WARNING: return "BUDGET-WARNING";
        case v1::WorkspaceEvent::KIND_BUDGET_THRESHOLD: return "BUDGET-THRESHOLD";
        default: return "IDLE-ENDED";
      }
    case v1::WorkspaceChange::WHAT_DELETED: return "DELETED";
    default: return "CHANGED";  // a kind newer than this wschedctl
  }
}

// get workspaces' columns after the one that says what happened.
std::vector<std::string> WatchHeader(const Options& options) {
  std::vector<std::string> header = WorkspaceTableHeader(options);
  header.insert(header.begin(), "CHANGE");
  return header;
}

// Every state named in --state, or InvalidArgument naming the bad one.
absl::Status AddStates(const std::string& text, v1::WorkspaceWatchFilter* filter) {
  for (absl::string_view name : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    v1::WorkspaceState state;
    if (!ParseWorkspaceState(std::string(name), &state)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown --state \"", name,
                       "\": want pending, placed, stopped or lost, or a list of them"));
    }
    filter->add_states(state);
  }
  return absl::OkStatus();
}

// Ctrl-C is how a watch ends: no error. A table shows no versions, so
// stderr tells the one to resume from, for whoever wants to.
int Interrupted(int64_t version, const WatchedResource &watched,
                const Options &options) {
  if (version > 0) {
    std::cerr << "resume with: " << WatchCommandLine(watched, options, version)
              << "\n";
  }
  return 0;
}

int Ended(const grpc::Status &status, int64_t version,
          const WatchedResource &watched, const Options &options) {
  const int rc =
      status.ok() ? 0 : Fail("get " + watched.plural + " --watch", status);
  if (std::string advice = ResumeAdvice(status, version, watched, options);
      !advice.empty()) {
    std::cerr << advice << "\n";
  }
  return rc;
}

WatchedResource WorkspacesWatched(const Options &options) {
  return {"workspaces",
          {{"--node", options.node},
           {"--pool", options.pool},
           {"--state", options.state},
           {"--org", options.org},
           {"--project", options.project},
           {"--class", options.class_id}}};
}

}  // namespace

std::string WatchFlagsProblem(const Options& options, bool named) {
  if (options.resume_version && !options.watch) {
    return "get workspaces: --resume-version needs --watch (it resumes a watch from a version "
           "that one printed)";
  }
  if (options.resume_version && *options.resume_version < 0) {
    return "get workspaces: --resume-version must be a version a watch reached (1 or more; 0 "
           "lists first)";
  }
  if (options.watch && named) {
    return "get workspace NAME: --watch follows a listing; follow one workspace with "
           "wschedctl watch NAME";
  }
  if (!options.watch &&
      (!options.org.empty() || !options.project.empty() || !options.class_id.empty())) {
    return "get workspaces: --org, --project and --class filter only a watch (--watch); the "
           "listing filters by --node, --pool and --state";
  }
  return "";
}

absl::StatusOr<v1::WatchWorkspacesRequest> WatchRequest(const Options& options) {
  v1::WatchWorkspacesRequest request;
  v1::WorkspaceWatchFilter* filter = request.mutable_filter();
  filter->set_node_name(options.node);
  filter->set_pool(options.pool);
  filter->set_org_id(options.org);
  filter->set_project_id(options.project);
  filter->set_class_id(options.class_id);
  if (absl::Status states = AddStates(options.state, filter); !states.ok()) return states;
  request.set_resume_version(options.resume_version.value_or(0));
  return request;
}

std::string ChangeLabel(const v1::WorkspaceChange& change) {
  std::string label = WhatText(change);
  // The stream says no more about it: the reader should not wait for more.
  if (change.left_filter()) absl::StrAppend(&label, " (left filter)");
  return label;
}

std::string WatchCommandLine(const Options& options, int64_t version) {
  return WatchCommandLine(WorkspacesWatched(options), options, version);
}

std::string WatchCommandLine(const WatchedResource &watched,
                             const Options &options, int64_t version) {
  std::string line = absl::StrCat("wschedctl get ", watched.plural, " --watch");
  if (version > 0) absl::StrAppend(&line, " --resume-version=", version);
  for (const auto &[flag, value] : watched.filters) {
    if (!value.empty())
      absl::StrAppend(&line, " ", flag, "=", ShellWord(value));
  }
  if (std::string output = OutputName(options.output); !output.empty()) {
    absl::StrAppend(&line, " -o ", output);
  }
  if (options.no_headers) absl::StrAppend(&line, " --no-headers");
  return line;
}

std::string ResumeAdvice(const grpc::Status& status, int64_t version, const Options& options) {
  return ResumeAdvice(status, version, WorkspacesWatched(options), options);
}

std::string ResumeAdvice(const grpc::Status &status, int64_t version,
                         const WatchedResource &watched,
                         const Options &options) {
  const std::string reason = ErrorReason(status);
  if (reason == "RESUME_TOO_OLD") {
    return absl::StrCat(
        "hint: the server no longer keeps the changes after version ", version,
        "; run without --resume-version to list again: ",
        WatchCommandLine(watched, options, 0));
  }
  const bool resumable = status.ok() || reason == "WATCH_TOO_SLOW" ||
                         status.error_code() == grpc::StatusCode::UNAVAILABLE;
  // Before SYNCED there is nothing to resume from: only a new listing is
  // whole, and that is the same command again.
  if (!resumable || version == 0) return "";
  return absl::StrCat(
      status.ok() ? "the server ended the watch; " : "hint: ", "resume with: ",
      WatchCommandLine(watched, options, version));
}

WorkspaceWatchPrinter::WorkspaceWatchPrinter(const Options &options,
                                             int64_t version)
    : WatchPrinter(options, version, WatchHeader(options),
                   [&options](const v1::WorkspaceChange &change) {
                     std::vector<std::string> row =
                         WorkspaceTableRow(change.workspace(), options);
                     row.insert(row.begin(), ChangeLabel(change));
                     return row;
                   }) {}

int RunWatch(const Client &client, const WatchedResource &watched,
             const Options &options,
             const std::function<grpc::Status(grpc::ClientContext *)> &stream,
             const std::function<int64_t()> &version) {
  auto context = client.StreamContext();
  CancelOnInterrupt interrupt(context.get()); // destroyed before the context
  const grpc::Status status = stream(context.get());
  if (interrupt.interrupted())
    return Interrupted(version(), watched, options);
  return Ended(status, version(), watched, options);
}

int WatchWorkspaces(const Client& client, const Options& options) {
  absl::StatusOr<v1::WatchWorkspacesRequest> request = WatchRequest(options);
  if (!request.ok()) {
    std::cerr << request.status().message() << " (see wschedctl help get)\n";
    return 2;
  }
  auto stub = v1::PlacementService::NewStub(client.channel);
  WorkspaceWatchPrinter printer(options, request->resume_version());
  return RunWatch(
      client, WorkspacesWatched(options), options,
      [&](grpc::ClientContext *context) {
        auto reader = stub->WatchWorkspaces(context, *request);
        v1::WatchWorkspacesResponse response;
        while (reader->Read(&response))
          printer.Print(response);
        return reader->Finish();
      },
      [&] { return printer.version(); });
}

}  // namespace wsched::cli
