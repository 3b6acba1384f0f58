#include "server/agent/node_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/grpc/token_hash.h"

namespace wsched::agent {
namespace {

// A token file is one line; anything much bigger is not one.
constexpr size_t kMaxNodeTokenFileBytes = 4096;

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  const int error = errno;
  return absl::ErrnoToStatus(error, absl::StrCat(what, " ", path));
}

bool IsToken68Char(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/';
}

// Closes on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // close(2)'s result: a failed close can mean lost data.
  bool Close() {
    int fd = fd_;
    fd_ = -1;
    return close(fd) == 0;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError("cannot write", path);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// mkdir 0700 of the state directory (its parents as umask says) when missing.
absl::Status MakeStateDir(const std::string& state_dir) {
  std::error_code error;
  std::filesystem::path dir(state_dir);
  if (std::filesystem::is_directory(dir, error)) return absl::OkStatus();
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), error);
  if (mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError("cannot make the state directory", state_dir);
  }
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  Fd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError("cannot open", dir);
  if (fsync(fd.get()) != 0) return ErrnoError("cannot sync", dir);
  return absl::OkStatus();
}

}  // namespace

std::string NodeTokenPath(const std::string& state_dir) {
  return (std::filesystem::path(state_dir) / kNodeTokenFile).string();
}

absl::Status CheckBearerToken(absl::string_view token) {
  if (token.size() < grpc_api::kMinTokenLength || token.size() > grpc_api::kMaxTokenLength) {
    return absl::InvalidArgumentError(
        absl::StrFormat("must be one bearer token of %d to %d characters, has %d",
                        grpc_api::kMinTokenLength, grpc_api::kMaxTokenLength, token.size()));
  }
  absl::string_view body = token;
  while (!body.empty() && body.back() == '=') body.remove_suffix(1);
  if (body.empty()) return absl::InvalidArgumentError("must be one bearer token, not only '='");
  for (size_t i = 0; i < body.size(); ++i) {
    if (!IsToken68Char(body[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "must be one bearer token (A-Z a-z 0-9 - . _ ~ + /, then optional =); character ", i + 1,
          " is not"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> LoadNodeToken(const std::string& state_dir) {
  const std::string path = NodeTokenPath(state_dir);
  // O_NOFOLLOW: a link could lead the agent to send another file as its
  // credential; the state directory holds the file itself.
  Fd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": must be a regular file, is a symbolic link"));
    }
    return ErrnoError("cannot read the node token", path);
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) return ErrnoError("cannot stat", path);
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": must be a regular file"));
  }
  if ((info.st_mode & 0077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: must be accessible by its owner only (mode 0600 or 0400), is %04o; chmod 0600 it",
        path, info.st_mode & 07777));
  }
  if (info.st_size > static_cast<off_t>(kMaxNodeTokenFileBytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must hold one bearer token, is ", info.st_size, " bytes"));
  }
  std::string text(kMaxNodeTokenFileBytes, '\0');
  size_t size = 0;
  while (size < text.size()) {
    ssize_t n = read(fd.get(), text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot read the node token", path);
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  text.resize(size);
  std::string token(absl::StripAsciiWhitespace(text));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": is empty"));
  if (absl::Status valid = CheckBearerToken(token); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", valid.message()));
  }
  return token;
}

absl::Status SaveNodeToken(const std::string& state_dir, absl::string_view token) {
  if (absl::Status valid = CheckBearerToken(token); !valid.ok()) return valid;
  if (absl::Status made = MakeStateDir(state_dir); !made.ok()) return made;
  const std::string path = NodeTokenPath(state_dir);
  std::string temp = absl::StrCat(path, ".tmp-XXXXXX");
  // mkstemp makes the file 0600 whatever the umask.
  Fd fd(mkstemp(temp.data()));
  if (fd.get() < 0) return ErrnoError("cannot create a file in", state_dir);
  auto fail = [&](absl::Status status) {
    unlink(temp.c_str());
    return status;
  };
  if (fchmod(fd.get(), 0600) != 0) return fail(ErrnoError("cannot chmod", temp));
  if (absl::Status s = WriteAll(fd.get(), absl::StrCat(token, "\n"), temp); !s.ok()) return fail(s);
  if (fsync(fd.get()) != 0) return fail(ErrnoError("cannot sync", temp));
  if (!fd.Close()) return fail(ErrnoError("cannot close", temp));
  if (rename(temp.c_str(), path.c_str()) != 0) return fail(ErrnoError("cannot rename over", path));
  return SyncDir(state_dir);
}

absl::StatusOr<std::string> NewNodeToken() { return grpc_api::NewRandomToken(); }

std::string NodeTokenSha256(absl::string_view token) {
  return grpc_api::ToHex(grpc_api::Sha256(token));
}

}  // namespace wsched::agent
