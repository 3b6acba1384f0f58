#include "server/agent/rooted_fs.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using testing::ScratchDir;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(RootedFsTest, ReadsAndTrimsFilesBelowRoot) {
  ScratchDir dir;
  WriteFile(dir.path() / "proc/sys/kernel/osrelease", "6.1.0\n");
  RootedFs fs(dir.path().string());
  EXPECT_EQ(*fs.ReadFile("/proc/sys/kernel/osrelease"), "6.1.0\n");
  EXPECT_EQ(*fs.ReadTrimmed("/proc/sys/kernel/osrelease"), "6.1.0");
  EXPECT_TRUE(fs.Exists("/proc/sys/kernel"));
  EXPECT_TRUE(absl::IsNotFound(fs.ReadFile("/etc/os-release").status()));
}

TEST(RootedFsTest, AbsoluteSymlinkStaysInsideRoot) {
  // On a host /sys/module/x/version -> /etc/version would be fine; under a
  // root it must read <root>/etc/version, never the agent's own /etc.
  ScratchDir dir;
  WriteFile(dir.path() / "etc/version", "inside\n");
  fs::create_directories(dir.path() / "sys");
  fs::create_symlink("/etc/version", dir.path() / "sys/version");
  RootedFs fs(dir.path().string());
  EXPECT_EQ(*fs.ReadTrimmed("/sys/version"), "inside");
  EXPECT_EQ(*fs.Resolve("/sys/version"), dir.path() / "etc/version");
}

TEST(RootedFsTest, DotDotStopsAtRoot) {
  ScratchDir dir;
  WriteFile(dir.path() / "etc/hostname", "box\n");
  fs::create_directories(dir.path() / "a");
  fs::create_symlink("../../../../../etc/hostname", dir.path() / "a/link");
  RootedFs fs(dir.path().string());
  EXPECT_EQ(*fs.ReadTrimmed("/a/link"), "box");
  EXPECT_EQ(*fs.ReadTrimmed("/../../etc/hostname"), "box");
}

TEST(RootedFsTest, SymlinkLoopIsAnError) {
  ScratchDir dir;
  fs::create_symlink("b", dir.path() / "a");
  fs::create_symlink("a", dir.path() / "b");
  RootedFs fs(dir.path().string());
  absl::StatusOr<std::string> read = fs.ReadFile("/a");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), ::testing::HasSubstr("symbolic links"));
}

TEST(RootedFsTest, ListsDirectoriesSorted) {
  ScratchDir dir;
  WriteFile(dir.path() / "d/b", "");
  WriteFile(dir.path() / "d/a", "");
  fs::create_symlink("d", dir.path() / "link");
  RootedFs fs(dir.path().string());
  EXPECT_THAT(*fs.ListDir("/link"), ElementsAre("a", "b"));
  EXPECT_TRUE(absl::IsNotFound(fs.ListDir("/missing").status()));
}

TEST(RootedFsTest, PlainFilesAreNotCharDevices) {
  ScratchDir dir;
  WriteFile(dir.path() / "dev/nvidiactl", "");
  EXPECT_FALSE(RootedFs(dir.path().string()).CharDevice("/dev/nvidiactl").has_value());
}

TEST(RootedFsTest, RealCharDeviceKeepsItsNumbers) {
  std::optional<DeviceNumbers> null_device = RootedFs("/").CharDevice("/dev/null");
  if (!null_device) GTEST_SKIP() << "no /dev/null here";
  EXPECT_EQ(null_device->major, 1);
  EXPECT_EQ(null_device->minor, 3);
}

}  // namespace
}  // namespace wsched::agent
