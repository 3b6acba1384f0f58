#include "server/store/node_credential_repository.h"

#include "server/store/change_log.h"

namespace wsched::store {
namespace {

constexpr char kReturning[] =
    " RETURNING node_name, (SELECT pool FROM nodes WHERE name = node_name), token_sha256, "
    "(extract(epoch FROM issued_at) * 1000000)::int8, issued_by, version";

NodeCredentialRow RowOf(const pqxx::row& row) {
  NodeCredentialRow out;
  out.node = row[0].c_str();
  out.pool = row[1].is_null() ? "" : row[1].c_str();
  pqxx::binarystring digest(row[2]);
  out.token_sha256 = digest.str();
  out.issued_at = absl::FromUnixMicros(row[3].as<int64_t>());
  out.issued_by = row[4].c_str();
  out.version = row[5].as<int64_t>();
  return out;
}

std::optional<NodeCredentialRow> Written(const pqxx::result& result, ChangeSet& changes) {
  if (result.empty()) return std::nullopt;
  NodeCredentialRow row = RowOf(result[0]);
  changes.Add(Entity::kNodeCredential, row.node, row.version);
  return row;
}

}  // namespace

std::optional<NodeCredentialRow> InsertNodeCredential(pqxx::work& txn, const std::string& node,
                                                      const std::string& token_sha256,
                                                      const std::string& issued_by,
                                                      ChangeSet& changes) {
  return Written(
      txn.exec_params(std::string("INSERT INTO node_credentials (node_name, token_sha256, "
                                  "issued_by, version) VALUES ($1, $2, $3, "
                                  "nextval('entity_versions')) ON CONFLICT DO NOTHING") +
                          kReturning,
                      node, pqxx::binarystring(token_sha256), issued_by),
      changes);
}

std::optional<NodeCredentialRow> ReplaceNodeCredential(pqxx::work& txn, const std::string& node,
                                                       const std::string& token_sha256,
                                                       const std::string& issued_by,
                                                       ChangeSet& changes) {
  // Another node's token stays its own: the unique digest refuses it, seen
  // here before the statement that would fail the transaction.
  if (!txn.exec_params("SELECT 1 FROM node_credentials WHERE token_sha256 = $1 AND node_name <> $2",
                       pqxx::binarystring(token_sha256), node)
           .empty()) {
    return std::nullopt;
  }
  return Written(
      txn.exec_params(std::string("INSERT INTO node_credentials (node_name, token_sha256, "
                                  "issued_by, version) VALUES ($1, $2, $3, "
                                  "nextval('entity_versions')) ON CONFLICT (node_name) DO UPDATE "
                                  "SET token_sha256 = EXCLUDED.token_sha256, issued_at = now(), "
                                  "issued_by = EXCLUDED.issued_by, version = EXCLUDED.version") +
                          kReturning,
                      node, pqxx::binarystring(token_sha256), issued_by),
      changes);
}

bool DeleteNodeCredential(pqxx::work& txn, const std::string& node, ChangeSet& changes) {
  pqxx::result deleted =
      txn.exec_params("DELETE FROM node_credentials WHERE node_name = $1 RETURNING 1", node);
  if (deleted.empty()) return false;
  // No row carries it any more: a fresh version tells followers to forget it.
  changes.Add(Entity::kNodeCredential, node, NextVersion(txn));
  return true;
}

std::vector<NodeCredentialRow> LoadNodeCredentials(pqxx::work& txn,
                                                   const std::vector<std::string>& nodes) {
  const std::string select =
      "SELECT c.node_name, n.pool, c.token_sha256, (extract(epoch FROM c.issued_at) * 1000000)::int8, "
      "c.issued_by, c.version FROM node_credentials c JOIN nodes n ON n.name = c.node_name";
  pqxx::result rows = nodes.empty()
                          ? txn.exec(select)
                          : txn.exec_params(select + " WHERE c.node_name = ANY($1::text[])",
                                            TextArray(nodes));
  std::vector<NodeCredentialRow> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(RowOf(row));
  return out;
}

}  // namespace wsched::store
