// A catalog in a file of its own for one test case, removed when the case
// ends. ctest runs a file's cases in parallel processes, so each case needs
// its own file: the path carries the case's name.
#ifndef WSCHED_TESTS_SUPPORT_CATALOG_FILE_H_
#define WSCHED_TESTS_SUPPORT_CATALOG_FILE_H_

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace wsched::testing {

class CatalogFile {
 public:
  // Construct it inside a test (a fixture's member will do): the name of the
  // running case goes into the path.
  CatalogFile(std::string_view prefix, std::string_view yaml)
      : path_(::testing::TempDir() + "/" + std::string(prefix) + "-catalog-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml") {
    std::ofstream(path_) << yaml;
  }
  ~CatalogFile() { std::remove(path_.c_str()); }
  CatalogFile(const CatalogFile&) = delete;
  CatalogFile& operator=(const CatalogFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  const std::string path_;
};

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_CATALOG_FILE_H_
