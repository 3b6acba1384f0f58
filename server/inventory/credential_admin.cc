#include "server/inventory/credential_admin.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/inventory/node_inventory.h"
#include "server/store/unit_of_work.h"

namespace wsched::inventory {

NodeCredentials::Loader CredentialAdmin::LoaderOver(store::Database* db) {
  return [db](const std::vector<std::string>& nodes)
             -> absl::StatusOr<std::vector<store::NodeCredentialRow>> {
    std::vector<store::NodeCredentialRow> rows;
    if (db == nullptr) return rows;  // Unit tests of the placement path: none.
    absl::Status read = store::UnitOfWork::Run(
        *db, "reading node credentials",
        [&](store::UnitOfWork& unit) -> absl::Status {
          rows = unit.node_credentials().Load(nodes);
          return absl::OkStatus();
        },
        store::UnitOfWork::Mode::kSnapshot);
    if (!read.ok()) return read;
    return rows;
  };
}

absl::StatusOr<store::NodeCredentialRow> CredentialAdmin::Rotate(
    const std::string& name, const std::string& token_sha256, const std::string& issued_by) {
  if (db_ == nullptr) return absl::FailedPreconditionError("no database");
  std::optional<store::NodeCredentialRow> issued;
  absl::Status status = store::UnitOfWork::Run(*db_, "rotating node credential",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return UnknownNodeError(name);
    issued = unit.node_credentials().Replace(name, token_sha256, issued_by);
    // Only a 256-bit collision with another node's token gets here.
    if (!issued) return absl::AbortedError("the new token collides with another node's; retry");
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  Refresh(name);
  log::Info("node credential rotated", {{"node", name}, {"by", issued_by}});
  return *issued;
}

absl::StatusOr<bool> CredentialAdmin::Revoke(const std::string& name) {
  if (db_ == nullptr) return absl::FailedPreconditionError("no database");
  bool revoked = false;
  absl::Status status = store::UnitOfWork::Run(*db_, "revoking node credential",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto existing = unit.nodes().Load(name, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return UnknownNodeError(name);
    revoked = unit.node_credentials().Revoke(name);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  Refresh(name);
  log::Info("node credential revoked", {{"node", name}, {"had_one", revoked ? "true" : "false"}});
  return revoked;
}

void CredentialAdmin::Refresh(const std::string& node) {
  // The change is committed; should this read fail, the feed entry the
  // change published brings it (MirrorFeedSink).
  if (absl::Status refreshed = credentials_->Refresh({node}); !refreshed.ok()) {
    log::Warning("node credential refresh failed; the change feed will bring it",
                 {{"node", node}, {"error", std::string(refreshed.message())}});
  }
}

}  // namespace wsched::inventory
