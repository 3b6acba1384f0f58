#include "server/agent/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace wsched::agent {
namespace {

// nvidia-smi output for a full node is a few KiB; anything near this is junk.
constexpr size_t kMaxOutputBytes = 4 << 20;

// Closes its fd when it goes out of scope.
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

int WaitForExit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Reaps the child, killing it if it is still alive at `deadline` (it may
// close stdout and then hang).
std::optional<int> WaitForExitUntil(pid_t pid, absl::Time deadline) {
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return std::nullopt;
    if (absl::Now() >= deadline) {
      ::kill(pid, SIGKILL);
      WaitForExit(pid);
      return std::nullopt;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
}

std::string Describe(const CommandOutput& result) {
  if (result.signal != 0) return absl::StrCat("signal ", result.signal);
  return absl::StrCat("exit status ", result.exit_status);
}

}  // namespace

namespace {

// Runs argv; with `merge_stderr` the child's stderr goes into the output too.
absl::StatusOr<CommandOutput> Run(const std::vector<std::string>& argv, absl::Duration timeout,
                                  bool merge_stderr) {
  if (argv.empty()) return absl::InvalidArgumentError("no command to run");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  if (merge_stderr) posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // The child starts with no blocked signals and default dispositions: the
  // agent blocks SIGTERM for its own shutdown, and nvidia-smi must not
  // inherit that and outlive a stop of the service.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int number : {SIGTERM, SIGINT, SIGPIPE, SIGHUP}) sigaddset(&defaults, number);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  // posix_spawnp reports a missing binary as its result, unlike popen(3),
  // which would only give the shell's exit status 127.
  int spawn_error = ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error == ENOENT) return absl::NotFoundError(absl::StrCat(argv[0], ": not found"));
  if (spawn_error != 0) {
    return absl::UnavailableError(absl::StrCat(argv[0], ": ", std::strerror(spawn_error)));
  }
  write_end.Reset();  // Only the child writes; EOF comes when it is done.

  std::string output;
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::Duration left = deadline - absl::Now();
    pollfd readable{.fd = read_end.get(), .events = POLLIN, .revents = 0};
    int ready = left > absl::ZeroDuration()
                    ? ::poll(&readable, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1)
                    : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || output.size() > kMaxOutputBytes) {
      ::kill(pid, SIGKILL);
      WaitForExit(pid);
      if (ready < 0) return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
      if (ready == 0) {
        return absl::DeadlineExceededError(
            absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout)));
      }
      return absl::ResourceExhaustedError(
          absl::StrCat(argv[0], " printed more than ", kMaxOutputBytes, " bytes"));
    }
    char buffer[4096];
    ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF (or a read error, which ends the output too).
    output.append(buffer, static_cast<size_t>(n));
  }
  std::optional<int> exited = WaitForExitUntil(pid, deadline);
  if (!exited) {
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " did not exit within ", absl::FormatDuration(timeout)));
  }
  int status = *exited;
  CommandOutput result{std::move(output), -1, 0};
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace

absl::StatusOr<CommandOutput> RunAndCaptureAll(const std::vector<std::string>& argv,
                                               absl::Duration timeout) {
  return Run(argv, timeout, /*merge_stderr=*/true);
}

absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& argv,
                                          absl::Duration timeout) {
  absl::StatusOr<CommandOutput> result = Run(argv, timeout, /*merge_stderr=*/false);
  if (!result.ok()) return result.status();
  const std::string& output = result->output;
  if (result->exit_status != 0 || result->signal != 0) {
    // nvidia-smi explains failures ("couldn't communicate with the NVIDIA
    // driver") on stdout, so keep the start of it.
    absl::string_view hint = absl::StripAsciiWhitespace(absl::string_view(output).substr(0, 200));
    return absl::UnavailableError(absl::StrCat(argv[0], " failed with ",
                                               Describe(*result),
                                               hint.empty() ? "" : ": ", hint));
  }
  return std::move(result->output);
}

}  // namespace wsched::agent
