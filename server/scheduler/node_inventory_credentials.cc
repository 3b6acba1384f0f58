// NodeInventory's node credentials (docs/security.md, "Node identity"):
// rotation and revocation by admins. Bootstrap registration and removal
// change them in RegisterNode and RemoveNode, in the same transaction.
#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/scheduler/node_inventory.h"
#include "server/store/unit_of_work.h"

namespace wsched::scheduler {
absl::StatusOr<store::NodeCredentialRow> NodeInventory::RotateNodeCredential(
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
  RefreshCredentialOf(name);
  log::Info("node credential rotated", {{"node", name}, {"by", issued_by}});
  return *issued;
}

absl::StatusOr<bool> NodeInventory::RevokeNodeCredential(const std::string& name) {
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
  RefreshCredentialOf(name);
  log::Info("node credential revoked", {{"node", name}, {"had_one", revoked ? "true" : "false"}});
  return revoked;
}

void NodeInventory::RefreshCredentialOf(const std::string& node) {
  // The change is committed; should this read fail, the feed entry the
  // change published brings it (Scheduler::ApplyRecords).
  if (absl::Status refreshed = credentials_.Refresh({node}); !refreshed.ok()) {
    log::Warning("node credential refresh failed; the change feed will bring it",
                 {{"node", node}, {"error", std::string(refreshed.message())}});
  }
}

}  // namespace wsched::scheduler
