#include "server/cli/connection_settings.h"

#include <cstdio>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/cli/duration_flag.h"

namespace wsched::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ParsedArgs Args(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : ParsedArgs();
}

// A file under the test's temporary directory holding `text`.
std::string TempFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConnectionSettings, ServerFlagBeatsEnvironmentBeatsDefault) {
  EXPECT_EQ(ResolveConnection(Args({}), Env({}))->server, kDefaultServer);
  EXPECT_EQ(ResolveConnection(Args({}), Env({{"WSCHED_SERVER", "env:1"}}))->server, "env:1");
  EXPECT_EQ(ResolveConnection(Args({"--server", "flag:2"}), Env({{"WSCHED_SERVER", "env:1"}}))->server,
            "flag:2");
  EXPECT_EQ(ResolveConnection(Args({}), Env({{"WSCHED_SERVER", ""}}))->server, kDefaultServer);
}

TEST(ConnectionSettings, TokenOrderIsFlagThenFileFlagThenEnvThenFileEnv) {
  std::string flag_file = TempFile("flag-token", "from-flag-file\n");
  std::string env_file = TempFile("env-token", "  from-env-file  \n");
  auto env_all = Env({{"WSCHED_TOKEN", "from-env"}, {"WSCHED_TOKEN_FILE", env_file}});
  EXPECT_EQ(*ResolveToken(Args({"--token=from-flag", "--token-file", flag_file}), env_all),
            "from-flag");
  EXPECT_EQ(*ResolveToken(Args({"--token-file", flag_file}), env_all), "from-flag-file");
  EXPECT_EQ(*ResolveToken(Args({}), env_all), "from-env");
  EXPECT_EQ(*ResolveToken(Args({}), Env({{"WSCHED_TOKEN", ""}, {"WSCHED_TOKEN_FILE", env_file}})),
            "from-env-file");
  EXPECT_EQ(*ResolveToken(Args({}), Env({})), "");
}

TEST(ConnectionSettings, BadTokenFileNamesThePathNotTheContent) {
  std::string blank = TempFile("blank-token", " \n");
  absl::StatusOr<std::string> empty = ResolveToken(Args({"--token-file=" + blank}), Env({}));
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr(blank));
  absl::StatusOr<std::string> missing =
      ResolveToken(Args({}), Env({{"WSCHED_TOKEN_FILE", "/nonexistent/token"}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("$WSCHED_TOKEN_FILE"));
}

TEST(ConnectionSettings, TimeoutDefaultsAndParses) {
  EXPECT_EQ(ResolveConnection(Args({}), Env({}))->timeout, absl::Seconds(30));
  EXPECT_EQ(ResolveConnection(Args({"--timeout=500ms"}), Env({}))->timeout, absl::Milliseconds(500));
  EXPECT_EQ(*ParseDurationFlag("7"), absl::Seconds(7));
  EXPECT_EQ(*ParseDurationFlag("1ns"), absl::Nanoseconds(1));
  EXPECT_FALSE(ParseDurationFlag("-1s").ok());
  EXPECT_FALSE(ParseDurationFlag("inf").ok());
}

TEST(ConnectionSettings, TlsFlagsPassThrough) {
  ConnectionSettings settings =
      *ResolveConnection(Args({"--tls-ca=ca.pem", "--tls_server_name", "wsched"}), Env({}));
  EXPECT_EQ(settings.tls.ca_path, "ca.pem");
  EXPECT_EQ(settings.tls.server_name, "wsched");
  EXPECT_FALSE(settings.tls.tls);
}

}  // namespace
}  // namespace wsched::cli
