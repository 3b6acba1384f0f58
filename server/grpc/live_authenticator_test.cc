#include "server/grpc/live_authenticator.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::grpc_api {
namespace {

constexpr char kMethod[] = "/wsched.v1.ClassService/ListClasses";
constexpr char kFirst[] = "first-token-abcdefghijklmnopqrstuvwxyz";
constexpr char kSecond[] = "second-token-abcdefghijklmnopqrstuvwxyz";

class LiveAuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/wsched-auth-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/tokens.yaml";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  // Writes a new file and renames it into place, as rotation tools do.
  void Write(const std::string& text) {
    std::string tmp = path_ + ".new";
    std::ofstream(tmp) << text;
    ASSERT_EQ(std::rename(tmp.c_str(), path_.c_str()), 0);
  }
  static std::string Admin(const char* token) {
    return absl::StrCat("tokens: [{name: ops, sha256: ", ToHex(Sha256(token)), ", role: admin}]\n");
  }
  static absl::StatusCode Call(const LiveAuthenticator& auth, const char* token) {
    CallerCredentials caller;
    caller.authorization = absl::StrCat("Bearer ", token);
    return auth.Authorize(caller, kMethod).status().code();
  }
  static bool WaitForLoads(const LiveAuthenticator& auth, int64_t loads) {
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (auth.loads() < loads && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(10));
    return auth.loads() >= loads;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(LiveAuthenticatorTest, AChangedFileIsPickedUpWithoutRestart) {
  Write(Admin(kFirst));
  auto auth = LiveAuthenticator::Open(path_, {}, absl::Milliseconds(20));
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_EQ(Call(**auth, kFirst), absl::StatusCode::kOk);
  EXPECT_EQ(Call(**auth, kSecond), absl::StatusCode::kUnauthenticated);

  Write(Admin(kSecond));
  ASSERT_TRUE(WaitForLoads(**auth, 2));
  EXPECT_EQ(Call(**auth, kSecond), absl::StatusCode::kOk);
  EXPECT_EQ(Call(**auth, kFirst), absl::StatusCode::kUnauthenticated);
}

TEST_F(LiveAuthenticatorTest, ABadNewFileKeepsTheCurrentCredentials) {
  Write(Admin(kFirst));
  auto auth = LiveAuthenticator::Open(path_, {}, absl::ZeroDuration());
  ASSERT_TRUE(auth.ok()) << auth.status();
  Write("tokens: [{name: ops, token: short, role: admin}]\n");
  absl::Status reloaded = (*auth)->Reload();
  EXPECT_THAT(std::string(reloaded.message()), ::testing::HasSubstr("tokens[0] (ops).token"));
  EXPECT_EQ((*auth)->loads(), 1);
  EXPECT_EQ(Call(**auth, kFirst), absl::StatusCode::kOk);
  // Fixing the file and reloading (SIGHUP) takes the new credentials.
  Write(Admin(kSecond));
  EXPECT_TRUE((*auth)->Reload().ok());
  EXPECT_EQ(Call(**auth, kSecond), absl::StatusCode::kOk);
}

TEST_F(LiveAuthenticatorTest, ABadFileAtStartIsAnErrorNamingTheFile) {
  Write("tokens: [{name: ops, token: short, role: admin}]\n");
  auto auth = LiveAuthenticator::Open(path_, {}, absl::ZeroDuration());
  ASSERT_FALSE(auth.ok());
  EXPECT_THAT(std::string(auth.status().message()), ::testing::HasSubstr(path_));
  EXPECT_FALSE(LiveAuthenticator::Open(dir_ + "/missing.yaml", {}, absl::ZeroDuration()).ok());
}

}  // namespace
}  // namespace wsched::grpc_api
