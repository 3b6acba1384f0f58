// The tokens/identities file as the server uses it: loaded at start (a bad
// file stops the start), then re-read on SIGHUP and whenever the file
// changes, without a restart. A bad new file is logged and the previous
// credentials stay, so a typo cannot lock every caller out.
#ifndef WSCHED_SERVER_GRPC_LIVE_AUTHENTICATOR_H_
#define WSCHED_SERVER_GRPC_LIVE_AUTHENTICATOR_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/grpc/auth.h"

namespace wsched::grpc_api {

class LiveAuthenticator {
 public:
  // Loads `path` now. poll_interval > 0 starts a thread that checks the
  // file's identity (inode, size, mtime) that often and reloads on change.
  static absl::StatusOr<std::unique_ptr<LiveAuthenticator>> Open(const std::string& path,
                                                                  const CredentialOptions& options,
                                                                  absl::Duration poll_interval);
  // Development only (--allow_unauthenticated).
  static std::unique_ptr<LiveAuthenticator> AllowAll();
  ~LiveAuthenticator();
  LiveAuthenticator(const LiveAuthenticator&) = delete;
  LiveAuthenticator& operator=(const LiveAuthenticator&) = delete;

  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase& context,
                                      const std::string& method) const;
  absl::StatusOr<Principal> Authorize(const CallerCredentials& caller,
                                      const std::string& method) const;

  // Per-node tokens the server issued (bootstrap, rotation): consulted for
  // a token the file does not list. Set once the store is up.
  void SetNodeTokens(NodeTokenLookup lookup);

  // Re-reads the file; on error the current credentials stay and the error
  // is returned (and logged).
  absl::Status Reload();
  // Successful loads so far, the first included.
  int64_t loads() const;

 private:
  struct FileStamp {
    ino_t inode = 0;
    off_t size = -1;
    int64_t mtime_ns = -1;
    bool operator==(const FileStamp&) const = default;
  };
  LiveAuthenticator(std::string path, CredentialOptions options, Authenticator initial);
  static FileStamp Stamp(const std::string& path);
  struct Now {
    std::shared_ptr<const Authenticator> auth;
    std::shared_ptr<const NodeTokenLookup> node_tokens;  // May be null.
  };
  Now Current() const;
  void Poll(absl::Duration interval);

  const std::string path_;
  const CredentialOptions options_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Authenticator> current_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const NodeTokenLookup> node_tokens_ ABSL_GUARDED_BY(mu_);
  FileStamp stamp_ ABSL_GUARDED_BY(mu_);
  int64_t loads_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread poller_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_LIVE_AUTHENTICATOR_H_
