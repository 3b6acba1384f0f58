#include "server/catalog/units.h"

#include "gtest/gtest.h"

namespace wsched::catalog {
namespace {

TEST(Credits, ParseExactDecimals) {
  EXPECT_EQ(*ParseCreditsMilli("0"), 0);
  EXPECT_EQ(*ParseCreditsMilli("2"), 2000);
  EXPECT_EQ(*ParseCreditsMilli("2.5"), 2500);
  EXPECT_EQ(*ParseCreditsMilli("0.1"), 100);
  EXPECT_EQ(*ParseCreditsMilli("0.125"), 125);
  EXPECT_EQ(*ParseCreditsMilli("10.010"), 10010);
}

TEST(Credits, RefuseWhatIsNotAnExactDecimal) {
  for (const char* text : {"", "-1", "1.2345", "1e3", ".5", "5.", "1.2.3", "one", " 1", "+1"}) {
    EXPECT_FALSE(ParseCreditsMilli(text).ok()) << text;
  }
}

TEST(Credits, FormatIsTheInverse) {
  for (int64_t milli : {0, 1, 10, 100, 125, 2500, 3000, 123456}) {
    EXPECT_EQ(*ParseCreditsMilli(FormatCreditsMilli(milli)), milli);
  }
  EXPECT_EQ(FormatCreditsMilli(2500), "2.5");
  EXPECT_EQ(FormatCreditsMilli(3000), "3");
  EXPECT_EQ(FormatCreditsMilli(125), "0.125");
  EXPECT_EQ(FormatCreditsMilli(-1500), "-1.5");
}

TEST(SizeWithUnit, RefusesBareNumbers) {
  EXPECT_EQ(*ParseSizeWithUnit("16Gi"), int64_t{16} << 30);
  EXPECT_EQ(ParseSizeWithUnit("16").status().message(),
            "\"16\" has no unit; write e.g. \"16Gi\" or \"16Mi\"");
  EXPECT_EQ(ParseSizeWithUnit("16GB").status().message(),
            "\"16GB\" is not a quantity; did you mean 16Gi?");
  EXPECT_FALSE(ParseSizeWithUnit("0Gi").ok());
}

TEST(SizeWithUnit, FormatReadsBack) {
  for (int64_t bytes : {int64_t{1000}, int64_t{1024}, int64_t{3} << 40, int64_t{5'000'000'000'000},
                        int64_t{123'000}}) {
    ASSERT_TRUE(HasSizeText(bytes));
    EXPECT_EQ(*ParseSizeWithUnit(FormatSize(bytes)), bytes) << bytes;
  }
  EXPECT_FALSE(HasSizeText(1001));
}

TEST(Durations, ParseAndFormat) {
  EXPECT_EQ(*ParseCatalogDuration("10m"), absl::Minutes(10));
  EXPECT_EQ(*ParseCatalogDuration("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseCatalogDuration("0"), absl::ZeroDuration());
  EXPECT_FALSE(ParseCatalogDuration("600").ok());
  EXPECT_FALSE(ParseCatalogDuration("-5m").ok());
  EXPECT_FALSE(ParseCatalogDuration("inf").ok());
  EXPECT_EQ(FormatCatalogDuration(absl::Minutes(90)), "1h30m");
  EXPECT_EQ(FormatCatalogDuration(absl::Seconds(30)), "30s");
}

}  // namespace
}  // namespace wsched::catalog
