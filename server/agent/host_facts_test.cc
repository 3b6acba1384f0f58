#include "server/agent/host_facts.h"

#include <fstream>

#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using testing::ScratchDir;
using testing::Tree;

TEST(OsReleaseTest, ReadsQuotedAndBareValues) {
  OsRelease release = ParseOsRelease(
      "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"22.04\"\n# ID=comment\n");
  EXPECT_EQ(release.id, "ubuntu");
  EXPECT_EQ(release.version_id, "22.04");
}

TEST(OsReleaseTest, UnescapesDoubleQuotesAndKeepsSingleQuotesLiteral) {
  EXPECT_EQ(ParseOsRelease("ID='rhel'\nVERSION_ID=\"9\\\"x\"\n").version_id, "9\"x");
  EXPECT_EQ(ParseOsRelease("ID='rhel'\n").id, "rhel");
}

TEST(OsReleaseTest, FallsBackToUsrLib) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "usr/lib");
  std::ofstream(dir.path() / "usr/lib/os-release") << "ID=flatcar\nVERSION_ID=3815.2.0\n";
  absl::StatusOr<OsRelease> release = ReadOsRelease(RootedFs(dir.path().string()));
  ASSERT_TRUE(release.ok()) << release.status();
  EXPECT_EQ(release->id, "flatcar");
}

TEST(CpuinfoTest, CountsProcessorEntriesOnly) {
  EXPECT_EQ(CountProcessors("processor\t: 0\nmodel name\t: ARMv8 Processor rev 1\n\n"
                            "processor\t: 1\nmodel name\t: ARMv8 Processor rev 1\n"),
            2);
  EXPECT_EQ(CountProcessors(""), 0);
}

TEST(MeminfoTest, ConvertsKibibytes) {
  EXPECT_EQ(*ParseMemTotalBytes("MemFree: 1 kB\nMemTotal:       16318024 kB\n"),
            int64_t{16318024} * 1024);
  EXPECT_FALSE(ParseMemTotalBytes("MemTotal: lots\n").ok());
  EXPECT_FALSE(ParseMemTotalBytes("").ok());
  // Found by fuzz_agent_parsers: kibibytes whose byte count overflows int64.
  EXPECT_FALSE(ParseMemTotalBytes("MemTotal:       21136092049999999 kB\n").ok());
  EXPECT_TRUE(ParseMemTotalBytes("MemTotal: 9007199254740991 kB\n").ok());
}

TEST(HostFactsTest, ReadsTheTreeNotTheMachine) {
  RootedFs fs(Tree("h100-8gpu"));
  EXPECT_EQ(*ReadKernelRelease(fs), "5.15.0-91-generic");
  EXPECT_EQ(*ReadCpuMillis(fs), 32000);
  EXPECT_EQ(*ReadMemoryBytes(fs), int64_t{2113609832} * 1024);
  EXPECT_EQ(ReadHostname(fs), "h100-node-1");
}

TEST(HostFactsTest, HostnameIsLowerCased) {
  EXPECT_EQ(ReadHostname(RootedFs(Tree("desktop-usb-group"))), "desktop-01");
}

TEST(HostFactsTest, MissingKernelReleaseNamesTheFile) {
  ScratchDir dir;
  absl::StatusOr<std::string> kernel = ReadKernelRelease(RootedFs(dir.path().string()));
  ASSERT_TRUE(absl::IsNotFound(kernel.status()));
  EXPECT_NE(kernel.status().message().find("proc/sys/kernel/osrelease"), std::string::npos);
}

}  // namespace
}  // namespace wsched::agent
