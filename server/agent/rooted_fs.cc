#include "server/agent/rooted_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace wsched::agent {
namespace {

namespace fs = std::filesystem;

// Linux gives up after 40 links too; a loop in a broken tree must not hang us.
constexpr int kMaxSymlinks = 40;
// procfs/sysfs files are small; /proc/cpuinfo on a big host is the largest
// we read (~1 MiB). The cap only guards against a wrong --root.
constexpr size_t kMaxFileBytes = 16 << 20;

std::deque<std::string> Components(absl::string_view path) {
  std::deque<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    parts.emplace_back(part);
  }
  return parts;
}

absl::Status ErrnoStatus(int err, const fs::path& path) {
  std::string message = absl::StrCat(path.string(), ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

}  // namespace

RootedFs::RootedFs(std::string root) : root_(root.empty() ? "/" : std::move(root)) {}

absl::StatusOr<fs::path> RootedFs::Resolve(absl::string_view node_path) const {
  std::vector<std::string> resolved;  // Components below root_.
  std::deque<std::string> pending = Components(node_path);
  int links_left = kMaxSymlinks;
  auto host_path = [&] {
    fs::path path(root_);
    for (const std::string& part : resolved) path /= part;
    return path;
  };
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (!resolved.empty()) resolved.pop_back();
      continue;
    }
    resolved.push_back(std::move(part));
    std::error_code error;
    fs::path current = host_path();
    if (!fs::is_symlink(fs::symlink_status(current, error))) continue;
    if (--links_left < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(current.string(), ": too many levels of symbolic links"));
    }
    fs::path target = fs::read_symlink(current, error);
    if (error) return ErrnoStatus(error.value(), current);
    resolved.pop_back();
    if (target.is_absolute()) resolved.clear();
    std::deque<std::string> target_parts = Components(target.string());
    pending.insert(pending.begin(), target_parts.begin(), target_parts.end());
  }
  return host_path();
}

bool RootedFs::Exists(absl::string_view node_path) const {
  absl::StatusOr<fs::path> path = Resolve(node_path);
  std::error_code error;
  return path.ok() && fs::exists(*path, error);
}

namespace {

// Up to `limit` bytes of the file, plus one more when there are more, so the
// caller can tell a whole file from a cut one. procfs reports size 0, so it
// reads until EOF rather than trusting stat.
absl::StatusOr<std::string> ReadUpTo(const fs::path& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, path);
  std::string content;
  char buffer[8192];
  while (content.size() <= limit) {
    size_t want = std::min(sizeof buffer, limit + 1 - content.size());
    ssize_t n = ::read(fd, buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, path);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

}  // namespace

absl::StatusOr<std::string> RootedFs::ReadFile(absl::string_view node_path) const {
  absl::StatusOr<fs::path> path = Resolve(node_path);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::string> content = ReadUpTo(*path, kMaxFileBytes);
  if (content.ok() && content->size() > kMaxFileBytes) {
    return absl::OutOfRangeError(
        absl::StrCat(path->string(), ": larger than ", kMaxFileBytes, " bytes"));
  }
  return content;
}

absl::StatusOr<std::string> RootedFs::ReadHead(absl::string_view node_path, size_t bytes) const {
  absl::StatusOr<fs::path> path = Resolve(node_path);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::string> content = ReadUpTo(*path, bytes);
  if (content.ok() && content->size() > bytes) content->resize(bytes);
  return content;
}

absl::StatusOr<std::string> RootedFs::ReadTrimmed(absl::string_view node_path) const {
  absl::StatusOr<std::string> content = ReadFile(node_path);
  if (!content.ok()) return content.status();
  return std::string(absl::StripAsciiWhitespace(*content));
}

absl::StatusOr<std::vector<std::string>> RootedFs::ListDir(absl::string_view node_path) const {
  absl::StatusOr<fs::path> path = Resolve(node_path);
  if (!path.ok()) return path.status();
  std::error_code error;
  fs::directory_iterator it(*path, error);
  if (error) return ErrnoStatus(error.value(), *path);
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) return ErrnoStatus(error.value(), *path);
    names.push_back(it->path().filename().string());
  }
  if (error) return ErrnoStatus(error.value(), *path);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<DeviceNumbers> RootedFs::CharDevice(absl::string_view node_path) const {
  absl::StatusOr<fs::path> path = Resolve(node_path);
  struct stat info;
  if (!path.ok() || ::stat(path->c_str(), &info) != 0 || !S_ISCHR(info.st_mode)) {
    return std::nullopt;
  }
  return DeviceNumbers{static_cast<int64_t>(major(info.st_rdev)),
                       static_cast<int64_t>(minor(info.st_rdev))};
}

}  // namespace wsched::agent
