#include "server/grpc/token_hash.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

TEST(TokenHash, Sha256OfKnownText) {
  // FIPS 180-2 test vector.
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenHash, HexRoundTripsAndRejectsWrongShapes) {
  TokenDigest digest = Sha256("x");
  auto parsed = ParseHexDigest(ToHex(digest));
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(DigestsEqual(*parsed, digest));
  // Upper case is the same digest (people paste from other tools).
  std::string upper = ToHex(digest);
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  ASSERT_TRUE(ParseHexDigest(upper).ok());
  EXPECT_TRUE(DigestsEqual(*ParseHexDigest(upper), digest));
  EXPECT_THAT(std::string(ParseHexDigest("abc").status().message()), HasSubstr("64 hex digits"));
  EXPECT_FALSE(ParseHexDigest(std::string(64, 'g')).ok());
}

TEST(TokenHash, DigestsEqualComparesEveryByte) {
  TokenDigest a = Sha256("a");
  TokenDigest b = a;
  EXPECT_TRUE(DigestsEqual(a, b));
  b[31] ^= 1;
  EXPECT_FALSE(DigestsEqual(a, b));
}

TEST(TokenHash, NewTokensAreLongRandomAndUrlSafe) {
  auto first = NewRandomToken();
  auto second = NewRandomToken();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->size(), 43u);  // 32 bytes, base64 without padding.
  EXPECT_NE(*first, *second);
  EXPECT_GE(first->size(), kMinTokenLength);
  EXPECT_EQ(first->find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
}

}  // namespace
}  // namespace wsched::grpc_api
