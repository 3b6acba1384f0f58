#include "server/agent/nvidia_layout.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using testing::FakeNvidiaSmi;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ScratchDir;
using testing::Tree;

constexpr char kGpu0[] = "0000:19:00.0";
constexpr char kGpu1[] = "0000:3b:00.0";
constexpr char kGpu2[] = "0000:9b:00.0";
constexpr char kGpu3[] = "0000:bb:00.0";

// The fake nvidia-smi answers from a fixture folder, set through the
// environment the child inherits.
class NvidiaLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override { UseDir(Tree("nvidia-smi/h200-mig")); }
  void TearDown() override {
    for (const char* name : {"FAKE_NVIDIA_SMI_DIR", "FAKE_NVIDIA_SMI_TOPO", "FAKE_NVIDIA_SMI_FAIL",
                             "FAKE_NVIDIA_SMI_HANG", "FAKE_NVIDIA_SMI_MODE"}) {
      unsetenv(name);
    }
  }
  static void UseDir(const std::string& dir) { setenv("FAKE_NVIDIA_SMI_DIR", dir.c_str(), 1); }
  static void Fail(const char* args) { setenv("FAKE_NVIDIA_SMI_FAIL", args, 1); }
  // A copy of the h200 fixture folder, to change files in.
  static std::filesystem::path CopyOfH200(const ScratchDir& dir) {
    std::filesystem::copy(Tree("nvidia-smi/h200-mig"), dir.path());
    return dir.path();
  }
  static NvidiaLayout Read() { return NvidiaLayoutReader(FakeNvidiaSmi()).Read(); }
};

std::vector<std::string> Uuids(const core::GpuMig& mig) {
  std::vector<std::string> uuids;
  for (const core::MigInstance& instance : mig.instances) uuids.push_back(instance.uuid);
  return uuids;
}

TEST_F(NvidiaLayoutTest, H200NodeByPciAddress) {
  NvidiaLayout layout = Read();
  EXPECT_THAT(layout.problems, IsEmpty());
  EXPECT_TRUE(layout.modes_read);
  ASSERT_EQ(layout.mig.size(), 4u);

  const core::GpuMig& mixed = layout.mig[kGpu0];
  EXPECT_TRUE(mixed.enabled);
  EXPECT_TRUE(mixed.pending_enabled);
  EXPECT_EQ(mixed.profiles.size(), 7u);
  ASSERT_EQ(mixed.instances.size(), 4u);
  // -L lists the two 1g.18gb slices as devices 2 and 3; -q says device 2 is
  // GPU instance 8: the UUIDs follow the device index, not the order.
  EXPECT_THAT(Uuids(mixed), ElementsAre("MIG-5b1e0c7a-93d2-5f4e-8a61-c2d7e9f04b13",
                                        "MIG-a07c3e58-1d94-5b2f-9e6a-74f0b8c2d915",
                                        "MIG-c4e8a209-5f1b-5d73-a6c0-9b2e17d4f386",
                                        "MIG-3f92d1b6-7ae0-5c48-b1d3-08e6a5f7c240"));
  EXPECT_EQ(mixed.instances[2].gpu_instance, 7);

  EXPECT_EQ(layout.mig[kGpu1], (core::GpuMig{.enabled = false, .pending_enabled = true}));
  EXPECT_EQ(layout.mig[kGpu2], (core::GpuMig{.enabled = false, .pending_enabled = false}));

  // GPU instances without a single spanning compute instance get no UUID:
  // each of GI 1's two compute instances has one, neither is the slice's.
  const core::GpuMig& odd = layout.mig[kGpu3];
  EXPECT_THAT(Uuids(odd), ElementsAre("", "", "MIG-e2a5c7f0-48d1-5b96-a3e7-5c0f9d218b47"));

  ASSERT_EQ(layout.links.size(), 4u);
  const PeerLink nv18{.kind = core::GpuLinkKind::kNvlink, .nvlinks = 18};
  auto to = [&](const char* peer) {
    PeerLink link = nv18;
    link.peer_address = peer;
    return link;
  };
  EXPECT_THAT(layout.links[kGpu0], ElementsAre(to(kGpu1), to(kGpu2), to(kGpu3)));
  EXPECT_THAT(layout.links[kGpu3], ElementsAre(to(kGpu0), to(kGpu1), to(kGpu2)));
}

TEST_F(NvidiaLayoutTest, NoMigInModeMeansNoMigCommands) {
  // The desktop GPU says [N/A]; the fake fails any MIG command it is asked.
  unsetenv("FAKE_NVIDIA_SMI_DIR");
  Fail("mig -lgi");
  NvidiaLayout layout = Read();
  EXPECT_THAT(layout.problems, IsEmpty());
  EXPECT_TRUE(layout.modes_read);
  EXPECT_TRUE(layout.mig.empty());
  ASSERT_EQ(layout.links.size(), 1u);
  EXPECT_TRUE(layout.links["0000:01:00.0"].empty());
}

TEST_F(NvidiaLayoutTest, FailedInstanceListLeavesSlicesAndProfilesEmpty) {
  Fail("mig -lgi");
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("MIG slices: ")));
  EXPECT_THAT(layout.problems[0], HasSubstr("mig -lgi failed with exit status 4: Failed to get "
                                            "mig -lgi: Insufficient Permissions"));
  // The mode still says the GPU is in MIG mode; nothing is claimed about
  // its slices or what could be placed.
  EXPECT_EQ(layout.mig[kGpu0], (core::GpuMig{.enabled = true, .pending_enabled = true}));
  EXPECT_EQ(layout.links.size(), 4u);
}

TEST_F(NvidiaLayoutTest, FailedComputeInstanceListLeavesSlicesEmpty) {
  Fail("mig -lci");
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("MIG slices: ")));
  EXPECT_TRUE(layout.mig[kGpu0].instances.empty());
  EXPECT_TRUE(layout.mig[kGpu0].profiles.empty());
}

TEST_F(NvidiaLayoutTest, FailedPlacementsLeaveProfilesEmptyOnly) {
  Fail("mig -lgipp");
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("MIG profiles: ")));
  EXPECT_TRUE(layout.mig[kGpu0].profiles.empty());
  EXPECT_EQ(layout.mig[kGpu0].instances.size(), 4u);
  EXPECT_EQ(layout.mig[kGpu0].instances[0].uuid, "MIG-5b1e0c7a-93d2-5f4e-8a61-c2d7e9f04b13");
}

TEST_F(NvidiaLayoutTest, FailedQueryLeavesSlicesWithoutUuids) {
  Fail("-q");
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("MIG slice UUIDs: ")));
  EXPECT_THAT(Uuids(layout.mig[kGpu0]), ElementsAre("", "", "", ""));
  EXPECT_EQ(layout.mig[kGpu0].profiles.size(), 7u);
}

TEST_F(NvidiaLayoutTest, FailedTopologyLeavesLinksEmpty) {
  Fail("topo -m");
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("GPU links: ")));
  EXPECT_TRUE(layout.links.empty());
  EXPECT_EQ(layout.mig[kGpu0].instances.size(), 4u);
}

TEST_F(NvidiaLayoutTest, AMatrixOfOtherGpusIsRefused) {
  setenv("FAKE_NVIDIA_SMI_TOPO", Tree("nvidia-smi/topo/sxm-8gpu-nv18.txt").c_str(), 1);
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems,
              ElementsAre(HasSubstr("nvidia-smi topo -m shows 8 GPUs, the MIG mode query 4")));
  EXPECT_TRUE(layout.links.empty());
}

TEST_F(NvidiaLayoutTest, FailedModeQueryReadsNothingElse) {
  Fail("--query-gpu=index,pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader");
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("MIG mode: ")));
  EXPECT_FALSE(layout.modes_read);
  EXPECT_TRUE(layout.mig.empty());
  EXPECT_TRUE(layout.links.empty());
}

TEST_F(NvidiaLayoutTest, MalformedOutputIsAProblemNotAGuess) {
  ScratchDir dir;
  std::filesystem::path copy = CopyOfH200(dir);
  std::ofstream(copy / "mig-lgi.txt", std::ios::app) << "|   0  MIG 1g.18gb  19  9  9:1  |\n";
  UseDir(copy.string());
  NvidiaLayout layout = Read();
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("placement \"9:1\"")));
  EXPECT_TRUE(layout.mig[kGpu0].instances.empty());
}

TEST_F(NvidiaLayoutTest, NothingFoundIsNoSlicesAndNoProblem) {
  ScratchDir dir;
  std::filesystem::path copy = CopyOfH200(dir);
  // nvidia-smi exits 6 (NVML's "not found") with these.
  std::ofstream(copy / "mig-lgi.txt", std::ios::trunc) << "No GPU instances found: Not Found\n";
  std::ofstream(copy / "mig-lci.txt", std::ios::trunc) << "No compute instances found: Not Found\n";
  UseDir(copy.string());
  NvidiaLayout layout = Read();
  EXPECT_THAT(layout.problems, IsEmpty());
  EXPECT_TRUE(layout.mig[kGpu0].enabled);
  EXPECT_TRUE(layout.mig[kGpu0].instances.empty());
  EXPECT_EQ(layout.mig[kGpu0].profiles.size(), 7u);
}

TEST_F(NvidiaLayoutTest, ATimeoutEndsTheRound) {
  setenv("FAKE_NVIDIA_SMI_HANG", "mig -lgi", 1);
  absl::Time start = absl::Now();
  NvidiaLayout layout = NvidiaLayoutReader(FakeNvidiaSmi(), absl::Milliseconds(200)).Read();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("did not finish within 200ms"),
                                           HasSubstr("skipped, an earlier nvidia-smi timed out")));
  EXPECT_THAT(layout.problems[1], HasSubstr("GPU links: "));
  EXPECT_TRUE(layout.mig[kGpu0].enabled);
}

TEST_F(NvidiaLayoutTest, LinksAreReadAgainOnlyWhenTheGpusChange) {
  ScratchDir dir;
  std::filesystem::path copy = CopyOfH200(dir);
  UseDir(copy.string());
  NvidiaLayoutReader reader(FakeNvidiaSmi());
  ASSERT_EQ(reader.Read().links.size(), 4u);
  // Same GPUs: the links are kept, topo -m is not run.
  Fail("topo -m");
  NvidiaLayout again = reader.Read();
  EXPECT_THAT(again.problems, IsEmpty());
  EXPECT_EQ(again.links.size(), 4u);
  // A GPU less: topo -m runs again (and now fails).
  std::ofstream(copy / "mig-mode.csv", std::ios::trunc)
      << "0, 00000000:19:00.0, Enabled, Enabled\n1, 00000000:3B:00.0, Disabled, Enabled\n"
         "2, 00000000:9B:00.0, Disabled, Disabled\n";
  NvidiaLayout fewer = reader.Read();
  EXPECT_THAT(fewer.problems, ElementsAre(HasSubstr("GPU links: ")));
  EXPECT_TRUE(fewer.links.empty());
}

TEST_F(NvidiaLayoutTest, MissingNvidiaSmi) {
  NvidiaLayout layout = NvidiaLayoutReader("/nonexistent/nvidia-smi").Read();
  EXPECT_FALSE(layout.modes_read);
  ASSERT_THAT(layout.problems, ElementsAre(HasSubstr("MIG mode: /nonexistent/nvidia-smi")));
}

TEST(KeepKnownMigModesTest, KeepsTheModeOfGpusTheFreshReadSaysNothingAbout) {
  NvidiaLayout last;
  last.modes_read = true;
  last.mig["0000:19:00.0"] = core::GpuMig{
      .enabled = true, .pending_enabled = true, .instances = {{.profile = "7g.141gb"}}};
  last.mig["0000:3b:00.0"] = core::GpuMig{.enabled = false};
  NvidiaLayout fresh;
  fresh.problems = {"MIG mode: nvidia-smi failed"};
  NvidiaLayout kept = KeepKnownMigModes(last, fresh);
  // Modes only: slices that may be gone are not carried over.
  EXPECT_EQ(kept.mig["0000:19:00.0"], (core::GpuMig{.enabled = true, .pending_enabled = true}));
  EXPECT_EQ(kept.mig["0000:3b:00.0"], core::GpuMig{});
  EXPECT_EQ(kept.problems, fresh.problems);

  NvidiaLayout newer;
  newer.modes_read = true;
  newer.mig["0000:19:00.0"] = core::GpuMig{.enabled = false, .pending_enabled = false};
  EXPECT_FALSE(KeepKnownMigModes(last, newer).mig["0000:19:00.0"].enabled);
}

}  // namespace
}  // namespace wsched::agent
