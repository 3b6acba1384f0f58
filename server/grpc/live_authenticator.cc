#include "server/grpc/live_authenticator.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"

namespace wsched::grpc_api {
namespace {

void LogLoaded(const std::string& path, const Authenticator& auth, bool reload) {
  log::Info(reload ? "tokens file reloaded" : "tokens file loaded",
            {{"path", path},
             {"tokens", absl::StrCat(auth.table().token_count())},
             {"identities", absl::StrCat(auth.table().identity_count())}});
  for (const std::string& warning : auth.table().warnings()) {
    log::Warning("tokens file: weak entry", {{"path", path}, {"entry", warning}});
  }
}

}  // namespace

LiveAuthenticator::LiveAuthenticator(std::string path, CredentialOptions options,
                                     Authenticator initial)
    : path_(std::move(path)),
      options_(options),
      current_(std::make_shared<const Authenticator>(std::move(initial))) {}

absl::StatusOr<std::unique_ptr<LiveAuthenticator>> LiveAuthenticator::Open(
    const std::string& path, const CredentialOptions& options, absl::Duration poll_interval) {
  FileStamp stamp = Stamp(path);
  auto auth = Authenticator::FromYamlFile(path, options);
  if (!auth.ok()) return auth.status();
  LogLoaded(path, *auth, /*reload=*/false);
  std::unique_ptr<LiveAuthenticator> live(new LiveAuthenticator(path, options, *std::move(auth)));
  {
    absl::MutexLock lock(&live->mu_);
    live->stamp_ = stamp;
    live->loads_ = 1;
  }
  if (poll_interval > absl::ZeroDuration()) {
    live->poller_ = std::thread([raw = live.get(), poll_interval] { raw->Poll(poll_interval); });
  }
  return live;
}

std::unique_ptr<LiveAuthenticator> LiveAuthenticator::AllowAll() {
  return std::unique_ptr<LiveAuthenticator>(
      new LiveAuthenticator("", {}, Authenticator::AllowAll()));
}

LiveAuthenticator::~LiveAuthenticator() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (poller_.joinable()) poller_.join();
}

LiveAuthenticator::FileStamp LiveAuthenticator::Stamp(const std::string& path) {
  // stat() follows symlinks: a Kubernetes Secret volume swaps a symlink to a
  // new directory, which changes the inode even when size and mtime match.
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return {};
  return {info.st_ino, info.st_size,
          static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec};
}

LiveAuthenticator::Now LiveAuthenticator::Current() const {
  absl::MutexLock lock(&mu_);
  return {current_, node_tokens_};
}

void LiveAuthenticator::SetNodeTokens(NodeTokenLookup lookup) {
  auto shared = std::make_shared<const NodeTokenLookup>(std::move(lookup));
  absl::MutexLock lock(&mu_);
  node_tokens_ = std::move(shared);
}

absl::StatusOr<Principal> LiveAuthenticator::Authorize(const grpc::ServerContextBase& context,
                                                       const std::string& method) const {
  Now now = Current();
  return now.auth->Authorize(context, method, now.node_tokens.get());
}

absl::StatusOr<Principal> LiveAuthenticator::Authorize(const CallerCredentials& caller,
                                                       const std::string& method) const {
  Now now = Current();
  return now.auth->Authorize(caller, method, now.node_tokens.get());
}

absl::Status LiveAuthenticator::Reload() {
  if (path_.empty()) return absl::OkStatus();  // AllowAll: nothing to read.
  FileStamp stamp = Stamp(path_);
  auto auth = Authenticator::FromYamlFile(path_, options_);
  absl::MutexLock lock(&mu_);
  // Remember the stamp even on failure: the next write changes it again, and
  // an unchanged bad file should be reported once, not at every poll.
  stamp_ = stamp;
  if (!auth.ok()) {
    log::Error("tokens file rejected; the previous credentials stay",
               {{"path", path_}, {"error", std::string(auth.status().message())}});
    return auth.status();
  }
  LogLoaded(path_, *auth, /*reload=*/true);
  current_ = std::make_shared<const Authenticator>(*std::move(auth));
  ++loads_;
  return absl::OkStatus();
}

int64_t LiveAuthenticator::loads() const {
  absl::MutexLock lock(&mu_);
  return loads_;
}

void LiveAuthenticator::Poll(absl::Duration interval) {
  while (true) {
    FileStamp seen;
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) return;
      seen = stamp_;
    }
    // A file that vanished (mid-rotation) is not a change to act on yet.
    FileStamp now = Stamp(path_);
    if (now.size >= 0 && !(now == seen)) (void)Reload();
  }
}

}  // namespace wsched::grpc_api
