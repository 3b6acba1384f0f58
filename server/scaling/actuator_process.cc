#include "server/scaling/actuator_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

extern char** environ;

namespace wsched::scaling {
namespace {

constexpr size_t kTailBytes = 4096;
constexpr int kPollMillis = 20;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// The inherited environment with `overrides` replacing same-named entries.
std::vector<std::string> BuildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::set<std::string> replaced;
  std::vector<std::string> result;
  for (const auto& [name, value] : overrides) {
    replaced.insert(name);
    result.push_back(absl::StrCat(name, "=", value));
  }
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    absl::string_view text(*entry);
    absl::string_view name = text.substr(0, text.find('='));
    if (!replaced.contains(std::string(name))) result.emplace_back(text);
  }
  return result;
}

std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Keeps the last kTailBytes of everything appended.
void AppendTail(std::string& tail, const char* data, size_t size) {
  tail.append(data, size);
  if (tail.size() > kTailBytes) tail.erase(0, tail.size() - kTailBytes);
}

void DrainInto(int fd, std::string& tail) {
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      AppendTail(tail, buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return;  // EOF, EAGAIN (nothing more for now) or an error.
  }
}

// True once the child has exited; leaves it a zombie (WNOWAIT) so its pid,
// which is also the group id, cannot be reused while we signal the group.
bool HasExited(pid_t pid) {
  siginfo_t info{};
  int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  return rc == 0 && info.si_pid == pid;
}

int Reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Waits up to `grace` for the child to exit on its own.
bool ExitsWithin(pid_t pid, absl::Duration grace) {
  absl::Time until = absl::Now() + grace;
  while (absl::Now() < until) {
    if (HasExited(pid)) return true;
    absl::SleepFor(absl::Milliseconds(kPollMillis));
  }
  return HasExited(pid);
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status));
  return "unknown wait status";
}

}  // namespace

ProcessResult RunProcess(const ProcessSpec& spec, const std::function<bool()>& cancelled) {
  ProcessResult result;
  const absl::Time started = absl::Now();
  if (spec.argv.empty()) {
    result.status = absl::InvalidArgumentError("no command to run");
    return result;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.status = absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    return result;
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);
  ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  // Its own process group, so one kill reaches every process it started;
  // default signal handling, so a server that blocks SIGTERM for its own
  // shutdown does not make the command unkillable.
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

  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = BuildEnvironment(spec.env);
  std::vector<char*> argv_pointers = PointersTo(argv);
  std::vector<char*> env_pointers = PointersTo(env);
  pid_t pid = 0;
  int spawn_error = ::posix_spawnp(&pid, argv_pointers[0], &actions, &attributes,
                                   argv_pointers.data(), env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) {
    result.status =
        spawn_error == ENOENT
            ? absl::NotFoundError(absl::StrCat(spec.argv[0], ": not found"))
            : absl::InternalError(absl::StrCat(spec.argv[0], ": ", std::strerror(spawn_error)));
    return result;
  }
  write_end.Reset();  // Only the child writes.

  const absl::Time deadline = started + spec.timeout;
  absl::Status ended;  // Set when we had to stop it.
  while (!HasExited(pid)) {
    if (absl::Now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ended = absl::DeadlineExceededError(absl::StrCat(spec.argv[0], " did not finish within ",
                                                       absl::FormatDuration(spec.timeout)));
      break;
    }
    if (cancelled && cancelled()) {
      ::kill(-pid, SIGTERM);
      if (!ExitsWithin(pid, spec.kill_grace)) ::kill(-pid, SIGKILL);
      ended = absl::CancelledError(absl::StrCat(spec.argv[0], " stopped at shutdown"));
      break;
    }
    pollfd readable{.fd = read_end.get(), .events = POLLIN, .revents = 0};
    if (::poll(&readable, 1, kPollMillis) > 0) {
      DrainInto(read_end.get(), result.output_tail);
      // After EOF poll returns at once; sleep so the wait does not spin.
      if (readable.revents & POLLHUP) absl::SleepFor(absl::Milliseconds(kPollMillis));
    }
  }
  // Leftover background processes would overlap the next run of this pool.
  ::kill(-pid, SIGKILL);
  int status = Reap(pid);
  DrainInto(read_end.get(), result.output_tail);
  result.took = absl::Now() - started;
  if (!ended.ok()) {
    result.status = ended;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    result.status = absl::OkStatus();
  } else {
    result.status =
        absl::UnavailableError(absl::StrCat(spec.argv[0], " failed with ", DescribeExit(status)));
  }
  return result;
}

}  // namespace wsched::scaling
