#include "tests/support/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace wsched::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string MakeTempDir() {
  char pattern[] = "/tmp/wsched-test-XXXXXX";
  const char* dir = mkdtemp(pattern);
  return dir == nullptr ? "/tmp" : dir;
}

void WriteTokensFile(const std::string& path) {
  std::ofstream(path) << "tokens:\n"
                      << "  - {name: test-admin, token: " << kAdminToken << ", role: admin}\n"
                      << "  - {name: test-cp, token: " << kControlPlaneToken
                      << ", role: control-plane}\n"
                      << "  - {name: owner-p42, token: " << kOwnerToken
                      << ", role: project-owner, orgs: [o-1], projects: [p-42]}\n"
                      << "  - {name: test-agent, token: " << kAgentToken << ", role: agent}\n"
                      << "  - {name: test-actuator, token: " << kActuatorToken
                      << ", role: actuator}\n";
}

pid_t Spawn(const std::vector<std::string>& args, const std::string& log_path) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid, int timeout_seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace

std::string SourcePath(const std::string& relative) {
  return absl::StrCat(WSCHED_SOURCE_DIR, "/", relative);
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
  close(fd);
  auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

void Authorize(grpc::ClientContext& context, const std::string& token) {
  context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
}

ServerProcess::ServerProcess(ServerConfig config) : dir_(MakeTempDir()) {
  if (config.tokens_yaml.empty()) {
    WriteTokensFile(tokens_path());
  } else {
    std::ofstream(tokens_path()) << config.tokens_yaml;
  }
  if (config.metrics) metrics_port_ = FreePort();
  std::vector<std::string> args = {
      WSCHED_SERVER_BINARY,
      "--listen=" + config.listen,
      absl::StrCat("--port_file=", dir_, "/port"),
      config.metrics ? absl::StrCat("--metrics_listen=127.0.0.1:", metrics_port_)
                     : std::string("--metrics_listen="),
      absl::StrCat("--database_url=", config.database_url),
      absl::StrCat("--auth_tokens_file=", dir_, "/tokens.yaml"),
      "--database_connections=4",
  };
  if (!config.catalog_path.empty()) args.push_back("--catalog=" + config.catalog_path);
  if (config.shared_agent_credentials) args.push_back("--allow_shared_agent_credentials");
  for (const auto& flag : config.extra_flags) args.push_back(flag);
  pid_ = Spawn(args, dir_ + "/server.log");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = ReadFile(dir_ + "/port");
    if (!text.empty() && text.back() == '\n') {
      port_ = std::atoi(text.c_str());
      break;
    }
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (port_ == 0) {
    ADD_FAILURE() << "wsched-server did not start:\n" << Log();
    return;
  }
  channel_ = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Stop();
}

std::string ServerProcess::address() const { return absl::StrCat("127.0.0.1:", port_); }

std::string ServerProcess::Log() const { return ReadFile(dir_ + "/server.log"); }

bool ServerProcess::WaitForLog(const std::string& text, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (Log().find(text) == std::string::npos) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

void ServerProcess::Signal(int signal) const {
  if (pid_ > 0) kill(pid_, signal);
}

int ServerProcess::Stop() {
  if (pid_ <= 0) return -1;
  // An open idle connection makes the server wait for it to close before it
  // exits; tests should not pay for that.
  channel_.reset();
  kill(pid_, SIGTERM);
  int code = WaitExit(pid_, 30);
  pid_ = -1;
  return code;
}

ExitResult RunServerToExit(const std::vector<std::string>& flags, int timeout_seconds) {
  std::string dir = MakeTempDir();
  std::vector<std::string> args = {WSCHED_SERVER_BINARY};
  args.insert(args.end(), flags.begin(), flags.end());
  pid_t pid = Spawn(args, dir + "/server.log");
  ExitResult result;
  result.exit_code = WaitExit(pid, timeout_seconds);
  result.log = ReadFile(dir + "/server.log");
  return result;
}

}  // namespace wsched::testing
