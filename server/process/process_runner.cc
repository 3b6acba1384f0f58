#include "server/process/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

extern char** environ;

namespace wsched::process {
namespace {

// How often `cancelled` is asked, and how often exit is checked where the
// kernel gives no pidfd to wait on (before Linux 5.3, some seccomp filters).
constexpr absl::Duration kTick = absl::Milliseconds(20);
// Reads per wake-up: a command printing without pause must not keep the
// loop from noticing its deadline.
constexpr int kReadsPerWake = 16;

// Closes its fd when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

struct Pipe {
  Fd read;   // Ours, non-blocking.
  Fd write;  // The child's; closed here once it is started.
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  // O_CLOEXEC at creation: a child another thread starts meanwhile must not
  // inherit either end.
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  Pipe pipe{Fd(fds[0]), Fd(fds[1])};
  ::fcntl(pipe.read.get(), F_SETFL, ::fcntl(pipe.read.get(), F_GETFL) | O_NONBLOCK);
  return pipe;
}

// Keeps at most `limit` bytes of a stream, the first or the last ones.
class Capture {
 public:
  Capture(size_t limit, Keep keep) : limit_(limit), keep_(keep) {}

  void Append(const char* data, size_t size) {
    if (keep_ == Keep::kHead) {
      size_t kept = std::min(size, limit_ - output_.text.size());
      output_.text.append(data, kept);
      output_.dropped_bytes += static_cast<int64_t>(size - kept);
      return;
    }
    output_.text.append(data, size);
    // Trimmed only past twice the limit, so a long output is not moved on
    // every read.
    if (output_.text.size() > 2 * limit_ + 1) TrimTail();
  }

  Output Take() && {
    if (keep_ == Keep::kTail) TrimTail();
    return std::move(output_);
  }

 private:
  void TrimTail() {
    if (output_.text.size() <= limit_) return;
    size_t excess = output_.text.size() - limit_;
    output_.text.erase(0, excess);
    output_.dropped_bytes += static_cast<int64_t>(excess);
  }

  const size_t limit_;
  const Keep keep_;
  Output output_;
};

// One output stream of the child: our end of its pipe and what it printed.
struct Stream {
  Fd fd;
  Capture capture;

  // Reads what is there now, up to kReadsPerWake buffers. Closes the fd at
  // EOF (or a read error, which ends the stream as well).
  void ReadAvailable() {
    char buffer[16384];
    for (int reads = 0; fd.get() >= 0 && reads < kReadsPerWake; ++reads) {
      ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n > 0) {
        capture.Append(buffer, static_cast<size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        fd.Reset();
      }
    }
  }
};

// The inherited environment with `overrides` replacing same-named entries.
std::vector<std::string> BuildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::set<std::string, std::less<>> replaced;
  std::vector<std::string> result;
  for (const auto& [name, value] : overrides) {
    replaced.insert(name);
    result.push_back(absl::StrCat(name, "=", value));
  }
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    absl::string_view text(*entry);
    if (!replaced.contains(text.substr(0, text.find('=')))) result.emplace_back(text);
  }
  return result;
}

std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Starts the command with stdout on `out_fd` and stderr on `err_fd`.
absl::StatusOr<pid_t> Spawn(const Command& command, int out_fd, int err_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  // Its own process group, so one kill reaches every process it started;
  // no blocked signals and default dispositions, so a parent that blocks
  // SIGTERM for its own shutdown does not make the command unkillable.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int number : {SIGTERM, SIGINT, SIGPIPE, SIGHUP}) sigaddset(&defaults, number);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv = command.argv;
  std::vector<char*> argv_pointers = PointersTo(argv);
  std::vector<std::string> env;
  if (!command.env.empty()) env = BuildEnvironment(command.env);
  std::vector<char*> env_pointers = PointersTo(env);
  pid_t pid = 0;
  // posix_spawnp reports a missing binary as its result, unlike a shell,
  // which would only exit 127.
  int error = ::posix_spawnp(&pid, argv_pointers[0], &actions, &attributes, argv_pointers.data(),
                             command.env.empty() ? environ : env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error == ENOENT) return absl::NotFoundError(absl::StrCat(command.argv[0], ": not found"));
  if (error != 0) {
    return absl::UnavailableError(absl::StrCat(command.argv[0], ": ", std::strerror(error)));
  }
  return pid;
}

// The started child. It stays a zombie until Reap(), so its pid, which is
// also its group's id, cannot be reused while the group is signalled.
class Child {
 public:
  explicit Child(pid_t pid)
      : pid_(pid), pidfd_(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))) {}

  // -1 where the kernel has none; exit is then polled every kTick.
  int pidfd() const { return pidfd_.get(); }

  bool Exited() const {
    siginfo_t info{};
    int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    return rc == 0 && info.si_pid == pid_;
  }

  void SignalGroup(int number) const { ::kill(-pid_, number); }

  int Reap() const {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

 private:
  const pid_t pid_;
  const Fd pidfd_;
};

// Waits up to `timeout` (infinite: until something happens) for output or
// the child's exit, and reads the output that came.
absl::Status WaitAndRead(const Child& child, std::vector<Stream*>& streams,
                         absl::Duration timeout) {
  std::vector<pollfd> fds;
  for (Stream* stream : streams) {
    fds.push_back({.fd = stream->fd.get(), .events = POLLIN, .revents = 0});
  }
  fds.push_back({.fd = child.pidfd(), .events = POLLIN, .revents = 0});
  int millis = -1;
  if (timeout != absl::InfiniteDuration()) {
    // Rounded up: a wake-up just before the deadline would only spin.
    millis =
        static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout) + 1, 0, INT_MAX));
  }
  int ready = ::poll(fds.data(), fds.size(), millis);
  if (ready < 0 && errno != EINTR) {
    return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    if (ready > 0 && fds[i].revents != 0) streams[i]->ReadAvailable();
  }
  return absl::OkStatus();
}

// Reads the child's output until it exits, stopping its group at the
// deadline or on a cancel: SIGTERM first, SIGKILL after the grace.
absl::Status Supervise(const Command& command, absl::Time deadline, const Child& child,
                       std::vector<Stream*>& streams, Result& result) {
  bool stopping = false;
  absl::Time kill_at = absl::InfiniteFuture();
  while (!child.Exited()) {
    absl::Time now = absl::Now();
    if (!stopping) {
      result.timed_out = now >= deadline;
      result.cancelled = !result.timed_out && command.cancelled && command.cancelled();
      if (result.timed_out || result.cancelled) {
        stopping = true;
        child.SignalGroup(SIGTERM);
        kill_at = absl::Now() + command.kill_grace;
      }
    }
    if (now >= kill_at) {
      child.SignalGroup(SIGKILL);
      kill_at = absl::InfiniteFuture();
    }
    absl::Time wake = stopping ? kill_at : deadline;
    if (child.pidfd() < 0 || (command.cancelled && !stopping)) wake = std::min(wake, now + kTick);
    absl::Status waited = WaitAndRead(child, streams, wake - now);
    if (!waited.ok()) return waited;
  }
  return absl::OkStatus();
}

}  // namespace

std::string DescribeExit(const Result& result) {
  if (result.signal != 0) return absl::StrCat("killed by signal ", result.signal);
  return absl::StrCat("exit status ", result.exit_code);
}

absl::StatusOr<Result> RunCommand(const Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) {
    return absl::InvalidArgumentError("no command to run");
  }
  absl::StatusOr<Pipe> out_pipe = MakePipe();
  if (!out_pipe.ok()) return out_pipe.status();
  std::optional<Pipe> err_pipe;
  if (!command.merge_stderr) {
    absl::StatusOr<Pipe> made = MakePipe();
    if (!made.ok()) return made.status();
    err_pipe = std::move(*made);
  }
  const absl::Time started = absl::Now();
  int out_fd = out_pipe->write.get();
  absl::StatusOr<pid_t> pid = Spawn(command, out_fd, err_pipe ? err_pipe->write.get() : out_fd);
  if (!pid.ok()) return pid.status();
  // Only the child writes now.
  out_pipe->write.Reset();
  if (err_pipe) err_pipe->write.Reset();

  Stream out{std::move(out_pipe->read), Capture(command.output_limit, command.keep)};
  Stream err{err_pipe ? std::move(err_pipe->read) : Fd(),
             Capture(command.output_limit, command.keep)};
  std::vector<Stream*> streams = {&out, &err};
  Child child(*pid);
  Result result;
  absl::Status supervised = Supervise(command, started + command.timeout, child, streams, result);
  // Whatever it left behind in its group would overlap the next run.
  child.SignalGroup(SIGKILL);
  int status = child.Reap();
  if (!supervised.ok()) return supervised;
  // What was written before the exit is still in the pipes.
  for (Stream* stream : streams) stream->ReadAvailable();

  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = std::move(out.capture).Take();
  result.err = std::move(err.capture).Take();
  result.took = absl::Now() - started;
  return result;
}

}  // namespace wsched::process
