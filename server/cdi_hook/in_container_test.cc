#include "server/cdi_hook/in_container.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::cdi_hook {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ScratchRoot {
 public:
  ScratchRoot() {
    std::string pattern = (fs::temp_directory_path() / "cdi-hook-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~ScratchRoot() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(InContainer, ConfigurationListsEachFolderOnce) {
  EXPECT_EQ(LdsoConfContent({"/usr/lib64", "/usr/lib64/nvidia", "/usr/lib64"}),
            "# The NVIDIA driver's libraries, mounted by wsched's CDI spec.\n"
            "/usr/lib64\n/usr/lib64/nvidia\n");
}

TEST(InContainer, LdconfigReadsTheContainersFilesAndBothLayoutsSystemDirectories) {
  EXPECT_THAT(LdconfigArgs({"/usr/lib64"}),
              ::testing::ElementsAre("ldconfig", "-f", "/etc/ld.so.conf", "-C", "/etc/ld.so.cache",
                                     "/usr/lib64"));
  EXPECT_THAT(SystemLibraryDirs(), ::testing::Contains("/usr/lib64"));
  EXPECT_THAT(SystemLibraryDirs(), ::testing::Contains(HasSubstr("-linux-gnu")));
}

// chroot needs root (CI and tests/runtime run as root).
bool CanChroot() { return ::geteuid() == 0; }

TEST(InContainer, SymlinksAreMadeInsideTheRootAndAnImagesOwnFileIsNeverOverwritten) {
  if (!CanChroot()) GTEST_SKIP() << "chroot needs root";
  ScratchRoot root;
  fs::create_directories(root.path() / "usr/lib64");
  fs::create_symlink("libcuda.so.1.stale", root.path() / "usr/lib64/libcuda.so.1");
  std::string error;
  ASSERT_TRUE(CreateSymlinksIn(root.path().string(),
                               {{{"libcuda.so.550.54.15", "/usr/lib64/libcuda.so.1"},
                                 {"libnvidia-ml.so.550.54.15", "/usr/lib/x/libnvidia-ml.so.1"}}},
                               error))
      << error;
  EXPECT_EQ(fs::read_symlink(root.path() / "usr/lib64/libcuda.so.1"), "libcuda.so.550.54.15");
  EXPECT_EQ(fs::read_symlink(root.path() / "usr/lib/x/libnvidia-ml.so.1"),
            "libnvidia-ml.so.550.54.15");

  std::ofstream(root.path() / "usr/lib64/libnvidia-cfg.so.1") << "the image's own file";
  EXPECT_FALSE(CreateSymlinksIn(root.path().string(),
                                {{{"libnvidia-cfg.so.550.54.15", "/usr/lib64/libnvidia-cfg.so.1"}}},
                                error));
  EXPECT_THAT(error, HasSubstr("/usr/lib64/libnvidia-cfg.so.1 exists and is not a symbolic link"));
  EXPECT_EQ(Read(root.path() / "usr/lib64/libnvidia-cfg.so.1"), "the image's own file");
}

TEST(InContainer, TheLinkerCacheOfTheRootNamesTheDriversFolder) {
  if (!CanChroot()) GTEST_SKIP() << "chroot needs root";
  const fs::path library = "/lib/x86_64-linux-gnu/libz.so.1";
  if (!fs::exists(library)) GTEST_SKIP() << library << " is not on this machine";
  ScratchRoot root;
  fs::create_directories(root.path() / "opt/driver");
  fs::copy_file(fs::canonical(library), root.path() / "opt/driver/libz.so.1");
  std::string error;
  ASSERT_TRUE(UpdateLdcacheIn(root.path().string(), {{"/opt/driver"}, "/sbin/ldconfig"}, error))
      << error;
  EXPECT_THAT(Read(root.path() / "etc/ld.so.conf.d/00-wsched-driver.conf"), HasSubstr("/opt/driver\n"));
  EXPECT_EQ(Read(root.path() / "etc/ld.so.conf"), "include /etc/ld.so.conf.d/*.conf\n");
  EXPECT_THAT(Read(root.path() / "etc/ld.so.cache"), HasSubstr("/opt/driver/libz.so.1"));
  EXPECT_FALSE(fs::exists("/opt/driver/libz.so.1")) << "nothing was written on the host";
}

TEST(InContainer, AMissingLdconfigIsAnErrorNamingIt) {
  ScratchRoot root;
  std::string error;
  EXPECT_FALSE(UpdateLdcacheIn(root.path().string(), {{"/opt/driver"}, "/no/such/ldconfig"}, error));
  EXPECT_THAT(error, HasSubstr("/no/such/ldconfig"));
}

}  // namespace
}  // namespace wsched::cdi_hook
