#include "server/agent/node_token.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::agent {
namespace {

using ::testing::HasSubstr;

constexpr char kToken[] = "Zm9vYmFyYmF6cXV4LXRlc3Qtbm9kZS10b2tlbi0wMQ";

class NodeTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/wsched-node-token-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    base_ = pattern;
    dir_ = base_ + "/state";
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  // Writes the node-token file directly, as an admin would, with `mode`.
  void Write(const std::string& text, mode_t mode) {
    std::filesystem::create_directories(dir_);
    std::ofstream(NodeTokenPath(dir_)) << text;
    ASSERT_EQ(chmod(NodeTokenPath(dir_).c_str(), mode), 0);
  }

  static mode_t Mode(const std::string& path) {
    struct stat info {};
    EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }

  std::string base_;
  std::string dir_;
};

TEST_F(NodeTokenTest, SaveMakesTheDirectoryAndAnOwnerOnlyFileThatLoadsBack) {
  ASSERT_TRUE(SaveNodeToken(dir_, kToken).ok());
  EXPECT_EQ(Mode(dir_), 0700u);
  EXPECT_EQ(Mode(NodeTokenPath(dir_)), 0600u);
  absl::StatusOr<std::string> loaded = LoadNodeToken(dir_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, kToken);
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(NodeTokenTest, SaveReplacesTheOldToken) {
  ASSERT_TRUE(SaveNodeToken(dir_, kToken).ok());
  const std::string next = absl::StrCat(kToken, "-next");
  ASSERT_TRUE(SaveNodeToken(dir_, next).ok());
  EXPECT_EQ(*LoadNodeToken(dir_), next);
  EXPECT_EQ(Mode(NodeTokenPath(dir_)), 0600u);
}

TEST_F(NodeTokenTest, SaveRefusesWhatIsNotAToken) {
  absl::Status status = SaveNodeToken(dir_, "short");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_FALSE(std::filesystem::exists(NodeTokenPath(dir_)));
}

TEST_F(NodeTokenTest, MissingIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(LoadNodeToken(dir_).status()));
}

TEST_F(NodeTokenTest, AnAdminsFileWithANewlineLoads) {
  Write(absl::StrCat(kToken, "\n"), 0400);
  EXPECT_EQ(*LoadNodeToken(dir_), kToken);
}

TEST_F(NodeTokenTest, GroupOrOtherAccessIsRefusedNamingThePathAndTheRule) {
  for (mode_t mode : {0644, 0640, 0604, 0620}) {
    Write(kToken, mode);
    absl::Status status = LoadNodeToken(dir_).status();
    EXPECT_TRUE(absl::IsFailedPrecondition(status)) << mode << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(NodeTokenPath(dir_)));
    EXPECT_THAT(status.message(), HasSubstr("owner only"));
  }
}

TEST_F(NodeTokenTest, ADirectoryOrALinkIsRefused) {
  std::filesystem::create_directories(NodeTokenPath(dir_));
  absl::Status status = LoadNodeToken(dir_).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("must be a regular file"));
  std::filesystem::remove(NodeTokenPath(dir_));

  const std::string elsewhere = base_ + "/elsewhere";
  std::ofstream(elsewhere) << kToken;
  chmod(elsewhere.c_str(), 0600);
  std::filesystem::create_symlink(elsewhere, NodeTokenPath(dir_));
  status = LoadNodeToken(dir_).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("symbolic link"));
}

TEST_F(NodeTokenTest, EmptyOrGarbledContentsAreRefused) {
  Write("", 0600);
  absl::Status status = LoadNodeToken(dir_).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("is empty"));

  Write(" \n", 0600);
  EXPECT_THAT(LoadNodeToken(dir_).status().message(), HasSubstr("is empty"));

  Write("too-short", 0600);
  EXPECT_THAT(LoadNodeToken(dir_).status().message(), HasSubstr("22 to 512 characters"));

  Write(absl::StrCat(kToken, " ", kToken), 0600);
  status = LoadNodeToken(dir_).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("character 43 is not"));

  Write(std::string(5000, 'a'), 0600);
  EXPECT_THAT(LoadNodeToken(dir_).status().message(), HasSubstr("5000 bytes"));
}

TEST(NodeTokenValues, NewTokensAreDistinctBearerTokens) {
  absl::StatusOr<std::string> a = NewNodeToken();
  absl::StatusOr<std::string> b = NewNodeToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 43u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(CheckBearerToken(*a).ok());
}

TEST(NodeTokenValues, Sha256IsLowerCaseHex) {
  // printf %s abc | sha256sum
  EXPECT_EQ(NodeTokenSha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace wsched::agent
