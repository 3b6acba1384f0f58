#include "server/agent/nvidia_topology.h"

#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ReadTreeFile;

core::GpuLink Nvlink(int peer, int links) {
  return {.peer = peer, .kind = core::GpuLinkKind::kNvlink, .nvlinks = links};
}
core::GpuLink Pcie(int peer, core::GpuLinkKind kind) { return {.peer = peer, .kind = kind}; }

TEST(NvidiaTopologyTest, SxmBoardIsNvlinkEverywhere) {
  // As captured on a terminal: the header is underlined with SGR escapes.
  std::string text = ReadTreeFile("nvidia-smi/topo/sxm-8gpu-nv18.txt");
  ASSERT_THAT(text, HasSubstr("\x1b[4m"));
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> links = ParseNvidiaSmiTopology(text);
  ASSERT_TRUE(links.ok()) << links.status();
  ASSERT_EQ(links->size(), 8u);
  for (const auto& [gpu, peers] : *links) {
    SCOPED_TRACE(gpu);
    ASSERT_EQ(peers.size(), 7u);
    int expected_peer = 0;
    for (const core::GpuLink& link : peers) {
      if (expected_peer == gpu) ++expected_peer;
      EXPECT_EQ(link, Nvlink(expected_peer++, 18));
    }
  }
}

TEST(NvidiaTopologyTest, PcieServerWithBridgedPairs) {
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> links =
      ParseNvidiaSmiTopology(ReadTreeFile("nvidia-smi/topo/pcie-4gpu-nv4-pairs.txt"));
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT((*links)[0], ElementsAre(Nvlink(1, 4), Pcie(2, core::GpuLinkKind::kPhb),
                                       Pcie(3, core::GpuLinkKind::kSys)));
  EXPECT_THAT((*links)[1], ElementsAre(Nvlink(0, 4), Pcie(2, core::GpuLinkKind::kSys),
                                       Pcie(3, core::GpuLinkKind::kPhb)));
  EXPECT_THAT((*links)[2], ElementsAre(Pcie(0, core::GpuLinkKind::kPhb),
                                       Pcie(1, core::GpuLinkKind::kSys), Nvlink(3, 4)));
  EXPECT_THAT((*links)[3], ElementsAre(Pcie(0, core::GpuLinkKind::kSys),
                                       Pcie(1, core::GpuLinkKind::kPhb), Nvlink(2, 4)));
}

TEST(NvidiaTopologyTest, NoNvlinkAndNoGpuNumaIdColumn) {
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> links =
      ParseNvidiaSmiTopology(ReadTreeFile("nvidia-smi/topo/pcie-4gpu-no-nvlink.txt"));
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT((*links)[0],
              ElementsAre(Pcie(1, core::GpuLinkKind::kPxb), Pcie(2, core::GpuLinkKind::kPhb),
                          Pcie(3, core::GpuLinkKind::kSys)));
  EXPECT_THAT((*links)[3],
              ElementsAre(Pcie(0, core::GpuLinkKind::kSys), Pcie(1, core::GpuLinkKind::kSys),
                          Pcie(2, core::GpuLinkKind::kSys)));
  for (const auto& [gpu, peers] : *links) {
    for (const core::GpuLink& link : peers) EXPECT_NE(link.kind, core::GpuLinkKind::kNvlink);
  }
}

TEST(NvidiaTopologyTest, SpacesInsteadOfTabsAndEveryPcieKind) {
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> links = ParseNvidiaSmiTopology(
      "        GPU0  GPU1  GPU2  GPU3  GPU4  GPU5  CPU Affinity  NUMA Affinity\n"
      "GPU0     X    PIX   PXB   PHB   NODE  SYS   0-15          0\n"
      "GPU1    PIX    X    PIX   PIX   PIX   PIX   0-15          0\n"
      "GPU2    PXB   PIX    X    PIX   PIX   PIX   0-15          0\n"
      "GPU3    PHB   PIX   PIX    X    PIX   PIX   0-15          0\n"
      "GPU4    NODE  PIX   PIX   PIX    X    NV2   0-15          0\n"
      "GPU5    SYS   PIX   PIX   PIX   NV2    X    16-31         1\n");
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_THAT((*links)[0],
              ElementsAre(Pcie(1, core::GpuLinkKind::kPix), Pcie(2, core::GpuLinkKind::kPxb),
                          Pcie(3, core::GpuLinkKind::kPhb), Pcie(4, core::GpuLinkKind::kNode),
                          Pcie(5, core::GpuLinkKind::kSys)));
  EXPECT_EQ((*links)[5][4], Nvlink(4, 2));
}

TEST(NvidiaTopologyTest, OneGpuHasNoLinks) {
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> links = ParseNvidiaSmiTopology(
      "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n");
  ASSERT_TRUE(links.ok()) << links.status();
  ASSERT_EQ(links->size(), 1u);
  EXPECT_TRUE((*links)[0].empty());
}

struct BadMatrix {
  const char* name;
  std::string text;
  const char* expected_message;
  friend void PrintTo(const BadMatrix& bad, std::ostream* out) { *out << bad.name; }
};

class NvidiaTopologyRejectsTest : public ::testing::TestWithParam<BadMatrix> {};

TEST_P(NvidiaTopologyRejectsTest, NamesTheProblem) {
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> links =
      ParseNvidiaSmiTopology(GetParam().text);
  ASSERT_FALSE(links.ok());
  EXPECT_EQ(links.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(links.status().message(), HasSubstr(GetParam().expected_message));
}

const char kHeader[] = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n";

INSTANTIATE_TEST_SUITE_P(
    Matrices, NvidiaTopologyRejectsTest,
    ::testing::Values(
        BadMatrix{"Asymmetric",
                  std::string(kHeader) + "GPU0\t X \tNV4\tSYS\t0\t0\n"
                                         "GPU1\tNV4\t X \tSYS\t0\t0\n"
                                         "GPU2\tNODE\tSYS\t X \t0\t0\n",
                  "cell GPU2/GPU0 (NODE) disagrees with GPU0/GPU2 (SYS)"},
        BadMatrix{"AsymmetricLinkCount",
                  std::string(kHeader) + "GPU0\t X \tNV4\tSYS\t0\t0\n"
                                         "GPU1\tNV2\t X \tSYS\t0\t0\n"
                                         "GPU2\tSYS\tSYS\t X \t0\t0\n",
                  "cell GPU1/GPU0 (NV2) disagrees with GPU0/GPU1 (NV4)"},
        BadMatrix{"MissingRow",
                  std::string(kHeader) + "GPU0\t X \tNV4\tSYS\t0\t0\n"
                                         "GPU1\tNV4\t X \tSYS\t0\t0\n",
                  "3 GPU columns but 2 GPU rows: the matrix is not square"},
        BadMatrix{"ExtraRow",
                  "\tGPU0\tGPU1\n"
                  "GPU0\t X \tNV4\nGPU1\tNV4\t X \nGPU2\tNV4\tNV4\t X \n",
                  "row GPU2 but only 2 GPU columns"},
        BadMatrix{"ShortRow", std::string(kHeader) + "GPU0\t X \tNV4\n",
                  "line 2: GPU0 has 2 cells, the header 3 GPU columns"},
        BadMatrix{"UnknownCell", std::string(kHeader) + "GPU0\t X \tFOO\tSYS\t0\t0\n",
                  "cell GPU0/GPU1: \"FOO\" is not X, NV#, PIX, PXB, PHB, NODE or SYS"},
        BadMatrix{"NvlinkWithoutCount", std::string(kHeader) + "GPU0\t X \tNVX\tSYS\t0\t0\n",
                  "cell GPU0/GPU1: \"NVX\" is not NV<bonded links"},
        BadMatrix{"DiagonalNotSelf", std::string(kHeader) + "GPU0\tSYS\tNV4\tSYS\t0\t0\n",
                  "cell GPU0/GPU0 is \"SYS\", not X (self)"},
        BadMatrix{"SelfOffDiagonal", std::string(kHeader) + "GPU0\t X \t X \tSYS\t0\t0\n",
                  "cell GPU0/GPU1 is X (self) off the diagonal"},
        BadMatrix{"RowsOutOfOrder", std::string(kHeader) + "GPU1\tNV4\t X \tSYS\t0\t0\n",
                  "row GPU1 where GPU0 belongs"},
        BadMatrix{"RowTwice",
                  std::string(kHeader) + "GPU0\t X \tNV4\tSYS\t0\t0\n"
                                         "GPU0\t X \tNV4\tSYS\t0\t0\n",
                  "row GPU0 where GPU1 belongs"},
        BadMatrix{"ColumnsOutOfOrder", "\tGPU0\tGPU2\tGPU1\n", "column GPU2 where GPU1 belongs"},
        BadMatrix{"GpuColumnAfterNic", "\tGPU0\tNIC0\tGPU1\n", "column GPU1 after the GPU columns"},
        BadMatrix{"NoHeader", "GPU1\tNV4\t X \n", "expected the header row"},
        BadMatrix{"Empty", "", "no header row"},
        // Only SGR escapes are nvidia-smi's; anything else is not a header.
        BadMatrix{"OtherEscape", "\t\x1b[2KGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n",
                  "expected the header row"}));

}  // namespace
}  // namespace wsched::agent
