#include "server/catalog/yaml_documents.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"

namespace wsched::catalog {
namespace {

using ::testing::HasSubstr;

TEST(LoadYamlDocuments, CountsDocumentsAndReturnsTheFirst) {
  EXPECT_EQ(LoadYamlDocuments("").count, 0);
  YamlDocuments one = LoadYamlDocuments("a: 1\n");
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(one.first["a"].as<int>(), 1);
  EXPECT_EQ(LoadYamlDocuments("a: 1\n---\nb: 2\n---\nc: 3\n").count, 3);
}

// Regression (found by catalog_fuzz): with yaml-cpp 0.7 these never
// returned from YAML::LoadAll and grew without bound.
TEST(LoadYamlDocuments, InputThatStallsTheParserIsAnErrorNotAHang) {
  for (const char* stalls : {",", ", ,", "a: 1\n---\n,"}) {
    EXPECT_THROW(LoadYamlDocuments(stalls), YAML::ParserException) << stalls;
  }
}

TEST(LoadYamlDocuments, ACatalogOfALoneCommaIsRefusedWithItsPosition) {
  CatalogCheck check = CheckCatalogText(",");
  ASSERT_FALSE(check.ok());
  EXPECT_THAT(check.errors[0], HasSubstr("cannot be read as YAML"));
}

}  // namespace
}  // namespace wsched::catalog
