#include "server/core/class_resolution.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::core {
namespace {

using ::testing::HasSubstr;

Catalog TestCatalog() {
  Catalog catalog;
  auto add = [&](std::string id, bool is_default = false, bool deprecated = false) {
    WorkspaceClass c;
    c.id = std::move(id);
    c.is_default = is_default;
    c.deprecated = deprecated;
    catalog.classes.push_back(c);
  };
  add("standard", /*is_default=*/true);
  add("large");
  add("gpu-1");
  add("gpu-8");
  add("legacy", false, /*deprecated=*/true);
  return catalog;
}

struct Case {
  std::string name;
  ClassRequest request;
  ProjectSettings project;
  OrgSettings org;
  // Expected on success:
  std::string class_id;
  ClassSource source = ClassSource::kRequest;
  std::string explanation;
  // Expected on failure (empty = success):
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string error;
};

std::vector<Case> Cases() {
  ProjectSettings p42{"p-42", "o-1", "gpu-1", {}};
  OrgSettings o1{"o-1", "large", {}, kUnlimitedGpuQuota};
  ProjectSettings no_project{"p-42", "o-1", "", {}};
  OrgSettings no_org{"o-1", "", {}, kUnlimitedGpuQuota};
  return {
      {"explicit request wins", {"o-1", "p-42", "gpu-8", "large"}, p42, o1, "gpu-8",
       ClassSource::kRequest, "class gpu-8 from the request"},
      {"restart keeps previous", {"o-1", "p-42", "", "large"}, p42, o1, "large",
       ClassSource::kPrevious, "class large from the previous run of the workspace"},
      {"restart keeps deprecated previous", {"o-1", "p-42", "", "legacy"}, p42, o1, "legacy",
       ClassSource::kPrevious, "class legacy from the previous run of the workspace"},
      {"restart may name its deprecated class", {"o-1", "p-42", "legacy", "legacy"}, p42, o1,
       "legacy", ClassSource::kRequest, "class legacy from the request"},
      {"project default", {"o-1", "p-42", "", ""}, p42, o1, "gpu-1",
       ClassSource::kProjectDefault, "class gpu-1 from the project default set on project p-42"},
      {"org default", {"o-1", "p-42", "", ""}, no_project, o1, "large", ClassSource::kOrgDefault,
       "class large from the org default set on org o-1"},
      {"installation default", {"o-1", "p-42", "", ""}, no_project, no_org, "standard",
       ClassSource::kInstallationDefault, "class standard from the installation default"},
      {"project default denied falls to org default",
       {"o-1", "p-42", "", ""}, {"p-42", "o-1", "gpu-1", {"gpu-1"}}, o1, "large",
       ClassSource::kOrgDefault, "class large from the org default set on org o-1"},
      {"org default outside allow-list falls to installation default",
       {"o-1", "p-42", "", ""}, no_project, {"o-1", "large", {"standard"}, 0}, "standard",
       ClassSource::kInstallationDefault, "class standard from the installation default"},
      {"deprecated project default is skipped",
       {"o-1", "p-42", "", ""}, {"p-42", "o-1", "legacy", {}}, o1, "large",
       ClassSource::kOrgDefault, "class large from the org default set on org o-1"},
      {"removed previous class is skipped", {"o-1", "p-42", "", "gone"}, p42, o1, "gpu-1",
       ClassSource::kProjectDefault, "class gpu-1 from the project default set on project p-42"},
      {"previous class now denied is skipped",
       {"o-1", "p-42", "", "large"}, {"p-42", "o-1", "", {"large"}}, no_org, "standard",
       ClassSource::kInstallationDefault, "class standard from the installation default"},
      // Refusals of an explicit class: errors, never a fallback.
      {"unknown explicit class", {"o-1", "p-42", "nope", ""}, p42, o1, "", {}, "",
       absl::StatusCode::kNotFound, "requested class nope does not exist"},
      {"deprecated explicit class", {"o-1", "p-42", "legacy", ""}, p42, o1, "", {}, "",
       absl::StatusCode::kFailedPrecondition, "requested class legacy is deprecated"},
      {"explicit class outside org allow-list", {"o-1", "p-42", "gpu-8", ""}, p42,
       {"o-1", "", {"standard", "gpu-1"}, 8}, "", {}, "", absl::StatusCode::kFailedPrecondition,
       "requested class gpu-8 is forbidden: not in the allow-list of org o-1"},
      {"explicit class in project deny-list", {"o-1", "p-42", "gpu-8", ""},
       {"p-42", "o-1", "", {"gpu-8"}}, o1, "", {}, "", absl::StatusCode::kFailedPrecondition,
       "requested class gpu-8 is forbidden: in the deny-list of project p-42"},
      {"nothing applies", {"o-1", "p-42", "", ""}, {"p-42", "o-1", "", {"standard"}}, no_org, "",
       {}, "", absl::StatusCode::kFailedPrecondition, "no class applies to project p-42"},
  };
}

TEST(ResolveClass, TableOfPrecedenceAndRefusals) {
  Catalog catalog = TestCatalog();
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    auto result = ResolveClass(c.request, catalog, c.project, c.org);
    if (c.code != absl::StatusCode::kOk) {
      ASSERT_FALSE(result.ok());
      EXPECT_EQ(result.status().code(), c.code);
      EXPECT_THAT(std::string(result.status().message()), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->class_id, c.class_id);
    EXPECT_EQ(result->source, c.source);
    EXPECT_EQ(result->explanation, c.explanation);
  }
}

TEST(ResolveClass, SkippedCandidatesCarryTheirRule) {
  auto result = ResolveClass({"o-1", "p-42", "", ""}, TestCatalog(),
                             {"p-42", "o-1", "gpu-1", {"gpu-1"}}, {"o-1", "", {}, -1});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->skipped.size(), 1u);
  EXPECT_EQ(result->skipped[0],
            "the project default set on project p-42 (gpu-1): class is in the deny-list of "
            "project p-42");
}

}  // namespace
}  // namespace wsched::core
