// Runs the real wsched-server binary as a child process for a test.
#ifndef WSCHED_TESTS_SUPPORT_SERVER_PROCESS_H_
#define WSCHED_TESTS_SUPPORT_SERVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"

namespace wsched::testing {

// Tokens the test tokens file defines, one per role.
inline constexpr char kAdminToken[] = "admin-token-0123456789abcdef";
inline constexpr char kControlPlaneToken[] = "control-plane-token-0123456789";
inline constexpr char kOwnerToken[] = "owner-p42-token-0123456789";  // o-1 / p-42
inline constexpr char kAgentToken[] = "agent-token-0123456789abcdef";
inline constexpr char kActuatorToken[] = "actuator-token-0123456789";

struct ServerConfig {
  std::string database_url;
  std::string catalog_path;  // Optional.
  std::vector<std::string> extra_flags;
  // gRPC listen address; port 0 = any free port.
  std::string listen = "127.0.0.1:0";
  // Serve /metrics (costs ~2 s at shutdown: the HTTP server's poll loop).
  bool metrics = false;
  // Contents of the tokens file; empty: the tokens above, one per role.
  std::string tokens_yaml;
  // The test tokens' agent speaks for any node of any pool, which most
  // tests use to play many nodes: --allow_shared_agent_credentials. Node
  // identity tests turn it off.
  bool shared_agent_credentials = true;
};

class ServerProcess {
 public:
  // Starts the server and waits until it listens (or dies: then the test
  // fails with its log).
  explicit ServerProcess(ServerConfig config);
  ~ServerProcess();  // SIGTERM, then wait.
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  bool started() const { return port_ > 0; }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  std::string address() const;
  // The --auth_tokens_file the server reads (tests rewrite it to reload).
  std::string tokens_path() const { return dir_ + "/tokens.yaml"; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  pid_t pid() const { return pid_; }
  // Server's stderr so far.
  std::string Log() const;
  // Waits until the server's log holds `text` (what a test awaits when the
  // server tells of an event only in its log, e.g. a rejected SIGHUP
  // reload); false when `timeout` passed first.
  bool WaitForLog(const std::string& text, absl::Duration timeout) const;

  void Signal(int signal) const;
  // SIGTERM and wait; returns the exit status (or -1).
  int Stop();

 private:
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
};

// Runs wsched-server to completion with the given flags (for start-up
// failures); returns exit code and stderr.
struct ExitResult {
  int exit_code = -1;
  std::string log;
};
ExitResult RunServerToExit(const std::vector<std::string>& flags, int timeout_seconds = 30);

// Adds "authorization: Bearer <token>" to a client context.
void Authorize(grpc::ClientContext& context, const std::string& token);

// A free TCP port on 127.0.0.1 (bound then released).
int FreePort();

// Plain HTTP GET of http://127.0.0.1:<port><path>; returns the body or "".
std::string HttpGet(int port, const std::string& path);

// Path of a file in the source tree.
std::string SourcePath(const std::string& relative);

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_SERVER_PROCESS_H_
