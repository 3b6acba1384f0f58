#include "server/core/paging.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(absl::StrCat("k", 100 + i));
  return keys;
}

std::string Identity(const std::string& s) { return s; }

TEST(PagingTest, SizeDefaultsAndIsCapped) {
  EXPECT_EQ(ReadPageRequest(0, "", "")->size, kDefaultPageSize);
  EXPECT_EQ(ReadPageRequest(7, "", "")->size, 7);
  EXPECT_EQ(ReadPageRequest(kMaxPageSize + 1, "", "")->size, kMaxPageSize);
}

TEST(PagingTest, NegativeSizeNamesTheField) {
  auto request = ReadPageRequest(-1, "", "");
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(request.status().message(), HasSubstr("page_size: must be >= 0"));
}

TEST(PagingTest, PagesVisitEveryItemOnce) {
  const std::vector<std::string> items = Keys(10);
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    auto request = ReadPageRequest(3, token, "pool=a");
    ASSERT_TRUE(request.ok()) << request.status();
    auto page = PageOf(items, *request, Identity, &token);
    seen.insert(seen.end(), page.begin(), page.end());
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(seen, items);
  EXPECT_EQ(pages, 4);
}

TEST(PagingTest, AnExactMultipleEndsWithoutAnEmptyPage) {
  const std::vector<std::string> items = Keys(6);
  std::string token;
  auto first = PageOf(items, *ReadPageRequest(3, "", ""), Identity, &token);
  ASSERT_FALSE(token.empty());
  auto second = PageOf(items, *ReadPageRequest(3, token, ""), Identity, &token);
  EXPECT_THAT(second, ElementsAre("k103", "k104", "k105"));
  EXPECT_TRUE(token.empty());
}

TEST(PagingTest, ItemsAddedBeforeTheCursorAreNotRepeated) {
  std::vector<std::string> items = Keys(4);
  std::string token;
  PageOf(items, *ReadPageRequest(2, "", ""), Identity, &token);
  items.insert(items.begin(), "k000");  // Sorts first: already passed.
  auto rest = PageOf(items, *ReadPageRequest(2, token, ""), Identity, &token);
  EXPECT_THAT(rest, ElementsAre("k102", "k103"));
}

TEST(PagingTest, TokenForOtherFiltersIsRefused) {
  std::string token;
  PageOf(Keys(4), *ReadPageRequest(2, "", "pool=a"), Identity, &token);
  auto request = ReadPageRequest(2, token, "pool=b");
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(request.status().message(), HasSubstr("page_token: it was issued for other filters"));
}

TEST(PagingTest, GarbageTokenIsRefused) {
  for (const char* token : {"%%%", "bm9wZQ", "cDE6OTk6eA"}) {  // bad base64, "nope", "p1:99:x"
    auto request = ReadPageRequest(2, token, "");
    ASSERT_FALSE(request.ok()) << token;
    EXPECT_THAT(request.status().message(), HasSubstr("page_token: not a page token")) << token;
  }
}

}  // namespace
}  // namespace wsched::core
