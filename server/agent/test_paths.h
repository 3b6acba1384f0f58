// Test-only: where the fake trees and the agent binary are, and scratch dirs.
#ifndef WSCHED_SERVER_AGENT_TEST_PATHS_H_
#define WSCHED_SERVER_AGENT_TEST_PATHS_H_

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace wsched::agent::testing {

// A tree under tests/sysfs, e.g. Tree("h100-8gpu").
inline std::string Tree(const std::string& name) {
  return absl::StrCat(WSCHED_SOURCE_DIR, "/tests/sysfs/", name);
}

inline std::string FakeNvidiaSmi() { return Tree("bin/nvidia-smi"); }

// The text of a file under tests/sysfs, e.g. "nvidia-smi/topo/sxm-8gpu-nv18.txt";
// empty (and a failed expectation) when it cannot be read.
inline std::string ReadTreeFile(const std::string& path) {
  std::ifstream in(Tree(path), std::ios::binary);
  EXPECT_TRUE(in.good()) << Tree(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A fresh directory for one test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("agent_", test->test_suite_name(), "_", test->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace wsched::agent::testing

#endif  // WSCHED_SERVER_AGENT_TEST_PATHS_H_
