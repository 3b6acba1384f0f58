#include "server/cdi_hook/hook_command.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::cdi_hook {
namespace {

using ::testing::HasSubstr;

TEST(HookCommand, ParsesNvidiasCreateSymlinksForm) {
  HookCommand command;
  std::string error;
  ASSERT_TRUE(ParseHookCommand({"create-symlinks", "--link",
                                "libcuda.so.550.54.15::/usr/lib64/libcuda.so.1"},
                               command, error))
      << error;
  const auto& links = std::get<CreateSymlinks>(command).links;
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].target, "libcuda.so.550.54.15");
  EXPECT_EQ(links[0].link, "/usr/lib64/libcuda.so.1");
}

TEST(HookCommand, ParsesUpdateLdcacheWithFoldersAndTheDefaultLdconfig) {
  HookCommand command;
  std::string error;
  ASSERT_TRUE(ParseHookCommand(
      {"update-ldcache", "--folder", "/usr/lib64", "--folder", "/usr/lib64/nvidia"}, command,
      error))
      << error;
  const auto& ldcache = std::get<UpdateLdcache>(command);
  EXPECT_THAT(ldcache.folders, ::testing::ElementsAre("/usr/lib64", "/usr/lib64/nvidia"));
  EXPECT_EQ(ldcache.ldconfig_path, "/sbin/ldconfig");
}

TEST(HookCommand, RefusesWhatCouldEscapeOrBreakTheConfigurationNamingTheArgument) {
  HookCommand command;
  std::string error;
  EXPECT_FALSE(ParseHookCommand({"update-ldcache", "--folder", "usr/lib64"}, command, error));
  EXPECT_THAT(error, HasSubstr("--folder usr/lib64: must be an absolute path"));
  EXPECT_FALSE(ParseHookCommand({"update-ldcache", "--folder", "/usr/lib64\n/etc"}, command, error));
  EXPECT_THAT(error, HasSubstr("--folder: must not contain a line break"));
  EXPECT_FALSE(ParseHookCommand({"create-symlinks", "--link", "x::/usr/../../etc/passwd"}, command,
                                error));
  EXPECT_THAT(error, HasSubstr("must not contain \"..\""));
  EXPECT_FALSE(ParseHookCommand({"create-symlinks", "--link", "no-separator"}, command, error));
  EXPECT_THAT(error, HasSubstr("--link no-separator: must be TARGET::LINK"));
  EXPECT_FALSE(ParseHookCommand({"update-ldcache", "--folder"}, command, error));
  EXPECT_FALSE(ParseHookCommand({"chmod"}, command, error));
  EXPECT_THAT(error, HasSubstr("unknown subcommand \"chmod\""));
  EXPECT_FALSE(ParseHookCommand({}, command, error));
}

}  // namespace
}  // namespace wsched::cdi_hook
