#include "server/cdi_hook/in_container.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

namespace wsched::cdi_hook {
namespace {

namespace fs = std::filesystem;

#if defined(__x86_64__)
constexpr char kTriplet[] = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr char kTriplet[] = "aarch64-linux-gnu";
#elif defined(__powerpc64__)
constexpr char kTriplet[] = "powerpc64le-linux-gnu";
#else
#error "wsched-cdi-hook knows the library directories of x86-64, AArch64 and ppc64le only"
#endif

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// The child's failure travels back through a pipe: the parent reports it.
void FailChild(int report_fd, const std::string& message) {
  ssize_t ignored = ::write(report_fd, message.data(), message.size());
  (void)ignored;
  _exit(1);
}

// Forks, chroots the child into `root` and runs `work` there; `work` either
// returns "" (success), returns an error, or replaces the process (exec).
bool RunChrooted(const std::string& root, const std::function<std::string()>& work,
                 std::string& error) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    error = Errno("pipe");
    return false;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    error = Errno("fork");
    return false;
  }
  if (pid == 0) {
    ::close(report[0]);
    if (::chroot(root.c_str()) != 0) FailChild(report[1], Errno("chroot " + root));
    if (::chdir("/") != 0) FailChild(report[1], Errno("chdir / in " + root));
    std::string failure = work();
    if (!failure.empty()) FailChild(report[1], failure);
    _exit(0);
  }
  ::close(report[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (!message.empty()) {
    error = message;
  } else if (WIFEXITED(status)) {
    error = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else {
    error = "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return false;
}

// One link; an existing link of the image is replaced (the node's driver
// wins), anything else at that path is an error, never overwritten.
std::string MakeSymlink(const Symlink& link) {
  std::error_code code;
  fs::create_directories(fs::path(link.link).parent_path(), code);
  if (code) return "creating the directory of " + link.link + ": " + code.message();
  struct stat info;
  if (::lstat(link.link.c_str(), &info) == 0) {
    if (!S_ISLNK(info.st_mode)) return link.link + " exists and is not a symbolic link";
    if (fs::read_symlink(link.link, code) == fs::path(link.target)) return "";
    if (::unlink(link.link.c_str()) != 0) return Errno("removing " + link.link);
  }
  if (::symlink(link.target.c_str(), link.link.c_str()) != 0) {
    return Errno("linking " + link.link + " -> " + link.target);
  }
  return "";
}

std::string WriteFile(const std::string& path, const std::string& content) {
  std::error_code code;
  fs::create_directories(fs::path(path).parent_path(), code);
  if (code) return "creating the directory of " + path + ": " + code.message();
  std::ofstream out(path, std::ios::trunc);
  out << content;
  out.close();
  if (!out) return "writing " + path + " failed";
  // Readable by a container that runs as another user.
  if (::chmod(path.c_str(), 0644) != 0) return Errno("chmod " + path);
  return "";
}

// Inside the chroot: the configuration, then the host's ldconfig over it.
std::string RebuildCache(const UpdateLdcache& command, int ldconfig_fd) {
  if (std::string failure = WriteFile(kLdsoConfFile, LdsoConfContent(command.folders));
      !failure.empty()) {
    return failure;
  }
  // An image without /etc/ld.so.conf (busybox, distroless) gets the usual
  // one, so a later ldconfig in the container keeps the driver's folders.
  if (::access("/etc/ld.so.conf", F_OK) != 0) {
    if (std::string failure = WriteFile("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        !failure.empty()) {
      return failure;
    }
  }
  std::vector<std::string> present;
  for (const std::string& dir : SystemLibraryDirs()) {
    struct stat info;
    if (::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) present.push_back(dir);
  }
  std::vector<std::string> args = LdconfigArgs(present);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path_env, nullptr};
  ::fexecve(ldconfig_fd, argv.data(), envp);
  return Errno("running the host's ldconfig in the container (it must be statically linked)");
}

}  // namespace

std::string LdsoConfContent(const std::vector<std::string>& folders) {
  std::string content = "# The NVIDIA driver's libraries, mounted by wsched's CDI spec.\n";
  std::set<std::string> seen;
  for (const std::string& folder : folders) {
    if (seen.insert(folder).second) content += folder + "\n";
  }
  return content;
}

std::vector<std::string> SystemLibraryDirs() {
  return {std::string("/lib/") + kTriplet, std::string("/usr/lib/") + kTriplet, "/lib64",
          "/usr/lib64"};
}

std::vector<std::string> LdconfigArgs(const std::vector<std::string>& present_system_dirs) {
  std::vector<std::string> args = {"ldconfig", "-f", "/etc/ld.so.conf", "-C", "/etc/ld.so.cache"};
  args.insert(args.end(), present_system_dirs.begin(), present_system_dirs.end());
  return args;
}

bool CreateSymlinksIn(const std::string& root, const CreateSymlinks& command, std::string& error) {
  return RunChrooted(
      root,
      [&]() -> std::string {
        for (const Symlink& link : command.links) {
          if (std::string failure = MakeSymlink(link); !failure.empty()) return failure;
        }
        return "";
      },
      error);
}

bool UpdateLdcacheIn(const std::string& root, const UpdateLdcache& command, std::string& error) {
  int ldconfig_fd = ::open(command.ldconfig_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ldconfig_fd < 0) {
    error = Errno("opening the host's " + command.ldconfig_path);
    return false;
  }
  bool ok = RunChrooted(root, [&] { return RebuildCache(command, ldconfig_fd); }, error);
  ::close(ldconfig_fd);
  if (!ok) error = "ldconfig in " + root + ": " + error;
  return ok;
}

}  // namespace wsched::cdi_hook
