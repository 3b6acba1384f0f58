#include "server/cdi_hook/container_root.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::cdi_hook {
namespace {

using ::testing::HasSubstr;

ReadFileFn Files(std::map<std::string, std::string> files) {
  return [files](const std::string& path) -> std::optional<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ContainerRoot, AbsoluteRootOfTheBundlesConfig) {
  std::string error;
  EXPECT_EQ(ContainerRoot(R"({"ociVersion":"1.0.2","id":"c1","pid":42,"bundle":"/run/b1"})",
                          Files({{"/run/b1/config.json", R"({"root":{"path":"/var/lib/c1/merged/"}})"}}),
                          error),
            "/var/lib/c1/merged");
}

TEST(ContainerRoot, RelativeRootIsBelowTheBundle) {
  std::string error;
  EXPECT_EQ(ContainerRoot(R"({"bundle":"/run/b1"})",
                          Files({{"/run/b1/config.json", R"({"root":{"path":"rootfs"}})"}}), error),
            "/run/b1/rootfs");
}

TEST(ContainerRoot, RefusesTheHostRootAndSaysWhatIsWrong) {
  std::string error;
  EXPECT_EQ(ContainerRoot(R"({"bundle":"/run/b1"})",
                          Files({{"/run/b1/config.json", R"({"root":{"path":"/run/.."}})"}}), error),
            "");
  EXPECT_THAT(error, HasSubstr("root.path is the host's \"/\""));
  EXPECT_EQ(ContainerRoot("not json", Files({}), error), "");
  EXPECT_THAT(error, HasSubstr("not a JSON object"));
  EXPECT_EQ(ContainerRoot(R"({"bundle":"relative"})", Files({}), error), "");
  EXPECT_THAT(error, HasSubstr("\"bundle\" must be an absolute path"));
  EXPECT_EQ(ContainerRoot(R"({"bundle":"/run/b2"})", Files({}), error), "");
  EXPECT_THAT(error, HasSubstr("/run/b2/config.json: cannot be read"));
  EXPECT_EQ(ContainerRoot(R"({"bundle":"/run/b1"})", Files({{"/run/b1/config.json", "{}"}}), error),
            "");
  EXPECT_THAT(error, HasSubstr("root.path is missing"));
}

}  // namespace
}  // namespace wsched::cdi_hook
