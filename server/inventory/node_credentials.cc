#include "server/inventory/node_credentials.h"

namespace wsched::inventory {

std::optional<NodeBinding> NodeCredentials::Find(absl::string_view token_sha256) const {
  absl::MutexLock lock(&mu_);
  auto it = by_digest_.find(token_sha256);
  if (it == by_digest_.end()) return std::nullopt;
  return it->second;
}

absl::Status NodeCredentials::Refresh(const std::vector<std::string>& nodes) {
  if (nodes.empty()) return absl::OkStatus();
  absl::MutexLock refreshing(&refresh_mu_);
  absl::StatusOr<std::vector<store::NodeCredentialRow>> rows = load_(nodes);
  if (!rows.ok()) return rows.status();
  absl::MutexLock lock(&mu_);
  for (const std::string& node : nodes) ForgetLocked(node);
  for (const store::NodeCredentialRow& row : *rows) PutLocked(row);
  return absl::OkStatus();
}

absl::Status NodeCredentials::ReloadAll() {
  absl::MutexLock refreshing(&refresh_mu_);
  absl::StatusOr<std::vector<store::NodeCredentialRow>> rows = load_({});
  if (!rows.ok()) return rows.status();
  absl::MutexLock lock(&mu_);
  by_digest_.clear();
  digest_of_node_.clear();
  for (const store::NodeCredentialRow& row : *rows) PutLocked(row);
  return absl::OkStatus();
}

size_t NodeCredentials::size() const {
  absl::MutexLock lock(&mu_);
  return by_digest_.size();
}

void NodeCredentials::ForgetLocked(const std::string& node) {
  auto it = digest_of_node_.find(node);
  if (it == digest_of_node_.end()) return;
  by_digest_.erase(it->second);
  digest_of_node_.erase(it);
}

void NodeCredentials::PutLocked(const store::NodeCredentialRow& row) {
  ForgetLocked(row.node);
  by_digest_[row.token_sha256] = NodeBinding{row.node, row.pool};
  digest_of_node_[row.node] = row.token_sha256;
}

}  // namespace wsched::inventory
