// Loading files and directories, and the sample catalogs under classes/.
#include "server/catalog/load.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/test_catalogs.h"

namespace wsched::catalog {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Sample(const char* name) { return std::string(WSCHED_SOURCE_DIR "/classes/") + name; }

// A fresh directory under the test's temp dir, removed afterwards.
class TempDir {
 public:
  TempDir()
      : path_(fs::path(::testing::TempDir()) /
              ("catalog_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

TEST(Samples, SaasCatalogIsValid) {
  const CatalogCheck check = CheckCatalogPath(Sample("saas.yaml"));
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.warnings, IsEmpty());
  const core::Catalog& catalog = check.catalog;
  ASSERT_NE(catalog.DefaultClass(), nullptr);
  EXPECT_EQ(catalog.DefaultClass()->id, "standard");
  // CPU classes, 1-, 2- and 8-GPU classes, container and VM isolation.
  std::set<int> gpu_counts;
  std::set<core::Isolation> isolations;
  for (const core::WorkspaceClass& cls : catalog.classes) {
    gpu_counts.insert(cls.gpu.count);
    if (cls.is_gpu()) isolations.insert(cls.gpu.isolation);
  }
  EXPECT_THAT(gpu_counts, ElementsAre(0, 1, 2, 8));
  EXPECT_THAT(isolations, ElementsAre(core::Isolation::kContainer, core::Isolation::kVm));
  ASSERT_NE(catalog.FindPool("gpu-h100"), nullptr);
  ASSERT_NE(catalog.FindPool("gpu-a100"), nullptr);
  EXPECT_EQ(catalog.FindPool("gpu-h100")->shape.gpus_per_node, 8);
  // The H100 pool shows both schedules.
  const core::NodePool& h100 = *catalog.FindPool("gpu-h100");
  EXPECT_EQ(h100.warm_buffer.time_zone, "Europe/Berlin");
  ASSERT_EQ(h100.warm_buffer.windows.size(), 1u);
  EXPECT_EQ(h100.warm_buffer.windows[0].nodes, 2);
  ASSERT_EQ(h100.scale_down.schedule.windows.size(), 1u);
  EXPECT_FALSE(h100.scale_down.schedule.windows[0].allow);
  EXPECT_EQ(catalog.FindPool("gpu-a100")->min_size, 0);
  EXPECT_EQ(catalog.FindClass("gpu-1x")->gpu.models, (std::vector<std::string>{"H100", "A100"}));
  // One exact kernel and one pattern.
  ASSERT_EQ(catalog.driver_policy.size(), 2u);
  EXPECT_EQ(catalog.driver_policy[0].kernel, "5.15.0-91-generic");
  EXPECT_EQ(catalog.driver_policy[1].kernel, "5.15.0-*-generic");
}

TEST(Samples, SelfHostedCatalogIsValid) {
  const CatalogCheck check = CheckCatalogPath(Sample("self-hosted.yaml"));
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.warnings, IsEmpty());
  EXPECT_EQ(check.catalog.classes.size(), 2u);
  ASSERT_NE(check.catalog.FindPool("gpu-l4"), nullptr);
  EXPECT_EQ(check.catalog.FindPool("gpu-l4")->min_size, 0);
}

// The complete example in the reference must stay valid as the rules evolve.
TEST(Samples, ReferenceExampleIsValid) {
  std::ifstream in(WSCHED_SOURCE_DIR "/docs/catalog.md");
  ASSERT_TRUE(in) << "docs/catalog.md not found";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t heading = doc.find("## A complete example");
  ASSERT_NE(heading, std::string::npos);
  const size_t start = doc.find("```yaml\n", heading);
  ASSERT_NE(start, std::string::npos);
  const size_t body = start + 8;
  const size_t end = doc.find("```", body);
  ASSERT_NE(end, std::string::npos);
  const CatalogCheck check = CheckCatalogText(doc.substr(body, end - body));
  EXPECT_THAT(check.errors, IsEmpty());
}

TEST(LoadCatalog, MergesTheYamlFilesOfADirectoryInNameOrder) {
  TempDir dir;
  dir.Write("10-cpu.yaml", testing::kMinimalCatalog);
  dir.Write("20-gpu.yml", R"(
classes:
  - id: gpu-1x
    display_name: One GPU
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 1}
pools:
  - {id: gpu, node: {cpu: 94, memory: 650Gi, gpus: 8, gpu_model: A100}, max_size: 8}
driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)");
  dir.Write("README.md", "not a catalog");
  dir.Write(".hidden.yaml", "not: [valid");
  absl::StatusOr<core::Catalog> catalog = LoadCatalog(dir.path());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_EQ(catalog->classes.size(), 2u);
  EXPECT_EQ(catalog->classes[0].id, "small");
  EXPECT_EQ(catalog->classes[1].id, "gpu-1x");
  EXPECT_EQ(catalog->pools.size(), 2u);
  EXPECT_EQ(catalog->driver_policy.size(), 1u);
}

TEST(LoadCatalog, DirectoryErrorsNameTheFile) {
  TempDir dir;
  dir.Write("a.yaml", testing::kMinimalCatalog);
  dir.Write("b.yaml", R"(
classes:
  - id: small
    display_name: Again
    resources: {cpu: 2, memory: 8GB}
    default: true
pools:
  - {id: gpu, node: {cpu: 1, memory: 1Gi, gpus: 1, gpu_model: A100}, min_size: 2, max_size: 1}
)");
  dir.Write("c.yaml", "classes: [\n");
  const CatalogCheck check = CheckCatalogPath(dir.path());
  EXPECT_THAT(
      check.errors,
      ElementsAre("b.yaml: classes[0] (small).resources.memory: \"8GB\" is not a quantity; did you "
                  "mean 8Gi?",
                  "c.yaml: line 2, column 1: end of sequence flow not found",
                  "b.yaml: pools[0] (gpu).max_size: must be >= min_size (2)",
                  "b.yaml: classes[0] (small).id: \"small\" is already used by a.yaml: classes[0]",
                  "classes: 2 default classes (small, small); mark exactly one"));
  EXPECT_EQ(LoadCatalog(dir.path()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LoadCatalog, MissingPathsAndEmptyDirectories) {
  EXPECT_EQ(LoadCatalog("/nonexistent/catalog.yaml").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(CheckCatalogPath("/nonexistent/catalog.yaml").errors,
              ElementsAre("/nonexistent/catalog.yaml: no such file or directory"));
  TempDir dir;
  EXPECT_THAT(CheckCatalogPath(dir.path()).errors,
              ElementsAre(dir.path() + ": holds no *.yaml or *.yml files"));
}

TEST(LoadCatalog, ASingleFileReadsLikeItsText) {
  TempDir dir;
  dir.Write("catalog.yaml", "classes: []\npools: []\n");
  EXPECT_THAT(CheckCatalogPath(dir.path() + "/catalog.yaml").errors,
              ElementsAre("classes: no default class; mark exactly one class with default: true"));
}

}  // namespace
}  // namespace wsched::catalog
