#include "server/app/class_operations.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/catalog/load.h"
#include "server/catalog/render.h"
#include "server/catalog/validate.h"
#include "server/core/error_reason.h"
#include "server/store/unit_of_work.h"

namespace wsched::app {
namespace {

absl::Status ClassNotFound(const std::string& id) {
  return core::NotFoundError(core::ErrorReason::kClassNotFound, "class", id);
}

// The current catalog with `cls` added or replaced.
core::Catalog WithClass(core::Catalog catalog, const core::WorkspaceClass& cls) {
  bool replaced = false;
  for (auto& existing : catalog.classes) {
    if (cls.is_default) existing.is_default = false;
    if (existing.id == cls.id) {
      existing = cls;
      replaced = true;
    }
  }
  if (!replaced) catalog.classes.push_back(cls);
  return catalog;
}

absl::Status BreaksTheCatalog(const std::string& class_id, const catalog::CatalogCheck& check) {
  // The message keeps its heading; each error is a field violation.
  return core::WithDetails(
      absl::InvalidArgumentError(absl::StrCat("class ", class_id, " breaks the catalog:\n",
                                              absl::StrJoin(check.errors, "\n"))),
      *core::DetailsOf(core::InvalidFieldLinesError(check.errors)));
}

}  // namespace

absl::StatusOr<core::Page<core::WorkspaceClass>> ClassOperations::List(
    int page_size, const std::string& page_token, bool include_deprecated) const {
  auto page = core::ReadPageRequest(page_size, page_token, include_deprecated ? "deprecated" : "");
  if (!page.ok()) return page.status();
  core::Page<core::WorkspaceClass> listed;
  absl::Status status = store::UnitOfWork::Run(*db_, "listing classes",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    std::vector<core::WorkspaceClass> shown;
    for (const auto& cls : catalog->classes) {
      if (!cls.deprecated || include_deprecated) shown.push_back(cls);
    }
    std::sort(shown.begin(), shown.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    listed.items = core::PageOf(shown, *page, [](const auto& c) { return c.id; },
                                &listed.next_page_token);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return listed;
}

absl::StatusOr<core::WorkspaceClass> ClassOperations::Get(const std::string& id) const {
  core::WorkspaceClass found;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading class",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    const core::WorkspaceClass* cls = catalog->FindClass(id);
    if (cls == nullptr) return ClassNotFound(id);
    found = *cls;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return found;
}

absl::StatusOr<core::WorkspaceClass> ClassOperations::Update(const core::WorkspaceClass& cls,
                                                             int64_t expected_version) {
  core::WorkspaceClass stored;
  absl::Status status = store::UnitOfWork::Run(*db_, "updating class",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    unit.catalog().Lock();
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    catalog::CatalogCheck check = catalog::CheckCatalog(WithClass(*catalog, cls), rules_);
    if (!check.ok()) return BreaksTheCatalog(cls.id, check);
    auto written = unit.catalog().WriteClass(cls, expected_version);
    if (!written.ok()) return written.status();
    stored = *std::move(written);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  catalog_changed_();
  return stored;
}

absl::StatusOr<bool> ClassOperations::Delete(const std::string& id, int64_t expected_version) {
  bool deprecated_instead = false;
  absl::Status status = store::UnitOfWork::Run(*db_, "deleting class",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    unit.catalog().Lock();
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    const core::WorkspaceClass* cls = catalog->FindClass(id);
    if (cls == nullptr) return ClassNotFound(id);
    if (expected_version != 0 && expected_version != cls->version) {
      return core::VersionMismatchError("class", cls->id, cls->version, expected_version);
    }
    if (cls->is_default) {
      return core::PreconditionError(
          core::ErrorReason::kClassIsDefault, "STATE", absl::StrCat("class/", cls->id),
          absl::StrCat("class ", cls->id,
                       " is the installation default; make another class default first"),
          {{"class", cls->id}});
    }
    core::Catalog target = *catalog;
    std::erase_if(target.classes, [&](const auto& c) { return c.id == cls->id; });
    target = catalog::KeepInUseClasses(*catalog, target, unit.catalog().ClassesInUse());
    deprecated_instead = target.FindClass(cls->id) != nullptr;
    return unit.catalog().Write(*catalog, target);
  });
  if (!status.ok()) return status;
  catalog_changed_();
  return deprecated_instead;
}

absl::StatusOr<ApplyResult> ClassOperations::Apply(
    const std::string& yaml, bool dry_run,
    const std::map<std::string, int64_t>& expected_pool_versions) {
  absl::StatusOr<ApplyResult> result = ApplyCheckedCatalog(
      *db_, catalog::CheckCatalogText(yaml, rules_), dry_run, expected_pool_versions);
  metrics_->CatalogApplied(result.ok(), /*from_reload=*/false);
  if (result.ok() && !dry_run) catalog_changed_();
  return result;
}

absl::StatusOr<std::string> ClassOperations::CatalogYaml() const {
  std::string yaml;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading catalog",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    yaml = catalog::RenderCatalogYaml(*catalog);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return yaml;
}

}  // namespace wsched::app
