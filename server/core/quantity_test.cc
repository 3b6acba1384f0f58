#include "server/core/quantity.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::HasSubstr;

TEST(ParseCpuMillis, AcceptsCoresAndMillicores) {
  EXPECT_EQ(*ParseCpuMillis("4"), 4000);
  EXPECT_EQ(*ParseCpuMillis("500m"), 500);
  EXPECT_EQ(*ParseCpuMillis("1.5"), 1500);
  EXPECT_EQ(*ParseCpuMillis("0.25"), 250);
}

TEST(ParseCpuMillis, RejectsNonQuantities) {
  EXPECT_FALSE(ParseCpuMillis("").ok());
  EXPECT_FALSE(ParseCpuMillis("0").ok());
  EXPECT_FALSE(ParseCpuMillis("-1").ok());
  EXPECT_FALSE(ParseCpuMillis("1.0001").ok());
  EXPECT_FALSE(ParseCpuMillis("4 cores").ok());
  EXPECT_FALSE(ParseCpuMillis("1.5m").ok());
}

TEST(ParseBytes, AcceptsSuffixes) {
  EXPECT_EQ(*ParseBytes("1024"), 1024);
  EXPECT_EQ(*ParseBytes("16Gi"), int64_t{16} << 30);
  EXPECT_EQ(*ParseBytes("500Mi"), int64_t{500} << 20);
  EXPECT_EQ(*ParseBytes("2T"), int64_t{2'000'000'000'000});
}

TEST(ParseBytes, SuggestsBinarySuffixForCommonSlips) {
  auto result = ParseBytes("16GB");
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("did you mean 16Gi?"));
  EXPECT_THAT(ParseBytes("4kb").status().message(), HasSubstr("did you mean 4Ki?"));
}

TEST(ParseBytes, RejectsZeroFractionsAndOverflow) {
  EXPECT_FALSE(ParseBytes("0").ok());
  EXPECT_FALSE(ParseBytes("1.5Gi").ok());
  EXPECT_FALSE(ParseBytes("99999999999Ti").ok());
  EXPECT_FALSE(ParseBytes("Gi").ok());
}

TEST(FormatQuantities, RoundTrip) {
  EXPECT_EQ(FormatBytes(int64_t{16} << 30), "16Gi");
  EXPECT_EQ(FormatBytes(1536), "1536");
  EXPECT_EQ(FormatBytes(3 << 10), "3Ki");
  EXPECT_EQ(FormatCpuMillis(4000), "4");
  EXPECT_EQ(FormatCpuMillis(1500), "1500m");
  for (const char* text : {"16Gi", "500Mi", "7Ki"}) {
    EXPECT_EQ(FormatBytes(*ParseBytes(text)), text);
  }
}

TEST(FormatSize, PrefersBinaryThenDecimalSuffixes) {
  EXPECT_EQ(FormatSize(int64_t{16} << 30), "16Gi");
  EXPECT_EQ(FormatSize(1'000'000'000), "1G");
  EXPECT_EQ(FormatSize(1'500'000), "1500k");
  EXPECT_EQ(FormatSize(2048), "2Ki");
  EXPECT_EQ(FormatSize(1001), "1001");
  EXPECT_EQ(FormatSize(0), "0");
  for (int64_t bytes : {int64_t{1000}, int64_t{1024}, int64_t{3} << 40, int64_t{5'000'000'000'000},
                        int64_t{123'000}, int64_t{1001}}) {
    EXPECT_EQ(*ParseBytes(FormatSize(bytes)), bytes) << bytes;
  }
}

}  // namespace
}  // namespace wsched::core
