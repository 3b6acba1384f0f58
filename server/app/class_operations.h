// The workspace-class rules, as plain operations over the store: listing,
// reading, updating and deleting one class, applying and reading the whole
// catalog. The gRPC ClassService decodes, authorizes, calls these and
// encodes; the catalog file at start-up and on SIGHUP takes the same apply.
#ifndef WSCHED_SERVER_APP_CLASS_OPERATIONS_H_
#define WSCHED_SERVER_APP_CLASS_OPERATIONS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/app/catalog_applier.h"
#include "server/catalog/diagnostics.h"
#include "server/core/paging.h"
#include "server/core/workspace_class.h"
#include "server/metrics/metrics.h"
#include "server/store/database.h"

namespace wsched::app {

class ClassOperations {
 public:
  // `catalog_changed` runs after every write that changed the catalog (the
  // replica applies it before the answer: read your writes).
  ClassOperations(store::Database* db, catalog::ValidationOptions rules, metrics::Metrics* metrics,
                  std::function<void()> catalog_changed)
      : db_(db), rules_(rules), metrics_(metrics), catalog_changed_(std::move(catalog_changed)) {}

  // By id; deprecated ones only with `include_deprecated`.
  absl::StatusOr<core::Page<core::WorkspaceClass>> List(int page_size, const std::string& page_token,
                                                        bool include_deprecated) const;
  // NOT_FOUND (CLASS_NOT_FOUND) for an unknown id.
  absl::StatusOr<core::WorkspaceClass> Get(const std::string& id) const;
  // Adds or replaces `cls` when the catalog with it passes every catalog
  // rule (INVALID_ARGUMENT with a field violation per broken rule) and the
  // stored class is at `expected_version` (0: unchecked; ABORTED
  // VERSION_MISMATCH otherwise). The check, the guard and the write see
  // one catalog, under the catalog lock. The class as stored.
  absl::StatusOr<core::WorkspaceClass> Update(const core::WorkspaceClass& cls,
                                              int64_t expected_version);
  // Removes the class, or deprecates it while workspaces use it (true).
  // The installation default cannot go (FAILED_PRECONDITION CLASS_IS_DEFAULT).
  absl::StatusOr<bool> Delete(const std::string& id, int64_t expected_version);
  // The catalog file's text, checked, applied or (dry_run) only diffed.
  absl::StatusOr<ApplyResult> Apply(const std::string& yaml, bool dry_run,
                                    const std::map<std::string, int64_t>& expected_pool_versions);
  // The stored catalog as a catalog file.
  absl::StatusOr<std::string> CatalogYaml() const;

 private:
  store::Database* const db_;
  const catalog::ValidationOptions rules_;
  metrics::Metrics* const metrics_;
  const std::function<void()> catalog_changed_;
};

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_CLASS_OPERATIONS_H_
