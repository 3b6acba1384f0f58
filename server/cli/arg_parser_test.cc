#include "server/cli/arg_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace wsched::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ParsedArgs Parse(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : ParsedArgs();
}

TEST(ArgParser, DashesAndUnderscoresNameTheSameFlag) {
  EXPECT_TRUE(Parse({"apply", "--dry-run"}).GetBool("dry_run"));
  EXPECT_TRUE(Parse({"apply", "--dry_run"}).GetBool("dry_run"));
  EXPECT_EQ(Parse({"--tls-server-name=x"}).Get("tls_server_name"), "x");
  EXPECT_EQ(Parse({"--gpu-quota=3"}).Get("gpu_quota"), "3");
}

TEST(ArgParser, OutputTakesEveryKubectlSpelling) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-o", "yaml"}, {"-oyaml"}, {"-o=yaml"}, {"--output", "yaml"}, {"--output=yaml"}}) {
    ParsedArgs parsed = Parse(args);
    EXPECT_EQ(parsed.Get("output"), "yaml") << args[0];
    EXPECT_TRUE(parsed.positional.empty()) << args[0];
  }
}

TEST(ArgParser, FlagsMayComeAnywhereAndWordsKeepTheirOrder) {
  ParsedArgs parsed = Parse({"--server=h:1", "get", "-o", "json", "nodes", "n1", "--pool", "p"});
  EXPECT_THAT(parsed.positional, ElementsAre("get", "nodes", "n1"));
  EXPECT_EQ(parsed.Get("server"), "h:1");
  EXPECT_EQ(parsed.Get("pool"), "p");
}

TEST(ArgParser, BoolFlagsTakeValuesAndNegations) {
  EXPECT_FALSE(Parse({"--dry-run=false"}).GetBool("dry_run"));
  EXPECT_TRUE(Parse({"--dry-run=true"}).GetBool("dry_run"));
  EXPECT_FALSE(Parse({"--dry-run", "--no-dry-run"}).GetBool("dry_run"));
  EXPECT_FALSE(Parse({"--tls", "--notls"}).GetBool("tls"));
  EXPECT_TRUE(Parse({"--no-headers"}).GetBool("no_headers"));
  EXPECT_TRUE(Parse({"-h"}).GetBool("help"));
  // A bool does not swallow the next word.
  EXPECT_THAT(Parse({"--restart", "ws-1"}).positional, ElementsAre("ws-1"));
}

TEST(ArgParser, DoubleDashEndsTheFlags) {
  ParsedArgs parsed = Parse({"driver-report", "--", "--weird-node", "5.15", "ok"});
  EXPECT_THAT(parsed.positional, ElementsAre("driver-report", "--weird-node", "5.15", "ok"));
}

TEST(ArgParser, ValueFlagTakesTheNextWordEvenWhenItLooksLikeAFlag) {
  EXPECT_EQ(Parse({"--gpu_quota", "-1"}).Get("gpu_quota"), "-1");
  EXPECT_EQ(Parse({"--default="}).Get("default"), "");
  EXPECT_TRUE(Parse({"--default="}).Has("default"));
}

TEST(ArgParser, LastRepeatWins) { EXPECT_EQ(Parse({"-o", "json", "-o", "yaml"}).Get("output"), "yaml"); }

TEST(ArgParser, RefusesUnknownFlags) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs({"pools", "--no_such_flag=1"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("unknown flag --no_such_flag=1"));
  EXPECT_FALSE(ParseArgs({"-x"}).ok());
  // --no-X negates bools only.
  EXPECT_FALSE(ParseArgs({"--no-server"}).ok());
}

TEST(ArgParser, RefusesMissingAndMalformedValues) {
  EXPECT_THAT(ParseArgs({"get", "-o"}).status().message(), HasSubstr("-o needs a value"));
  EXPECT_THAT(ParseArgs({"--priority=high"}).status().message(), HasSubstr("integer"));
  EXPECT_THAT(ParseArgs({"--dry-run=maybe"}).status().message(), HasSubstr("true or false"));
  EXPECT_THAT(ParseArgs({"--timeout=soon"}).status().message(), HasSubstr("--timeout"));
  EXPECT_FALSE(ParseArgs({"--timeout=0s"}).ok());
}

TEST(ArgParser, LoneDashIsAWord) { EXPECT_THAT(Parse({"-"}).positional, ElementsAre("-")); }

}  // namespace
}  // namespace wsched::cli
