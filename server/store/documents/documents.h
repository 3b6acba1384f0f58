// The store's own documents: the JSON that the classes, pools,
// driver_policy, nodes, workspaces (placement) and scaling_signals tables
// keep beside their real columns, and how they map to core types. They are
// a storage schema, not the API: an API field can be renamed without
// touching a stored row (docs/architecture.md "Storage").
//
// Each row records the schema version its document was written in (a
// `<column>_schema` column, migrations/0007_document_schema.sql). Version 1
// is the form wsched wrote before the store had a schema of its own (the
// proto3 JSON of the wsched.v1 messages), so every row already stored reads
// as it is. A reader refuses a version newer than kSchemaVersion instead of
// guessing at it.
#ifndef WSCHED_SERVER_STORE_DOCUMENTS_DOCUMENTS_H_
#define WSCHED_SERVER_STORE_DOCUMENTS_DOCUMENTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/driver_policy.h"
#include "server/core/hand_off.h"
#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/store/types.h"

namespace wsched::store::documents {

// The version every document is written in.
inline constexpr int kSchemaVersion = 1;

// Where a document was read from, for errors that name the table and row.
struct Origin {
  absl::string_view table;  // "nodes"
  absl::string_view row;    // The row's key, e.g. the node's name.
  int schema = kSchemaVersion;  // The row's recorded schema version.
};

// FailedPrecondition naming the table and row when `origin.schema` is newer
// than this binary reads (or not a version at all); OK otherwise.
absl::Status CheckSchema(const Origin& origin);

// Encode* write kSchemaVersion. Decode* check the origin's schema first;
// DataLoss (naming the table, row and field) for a document that does not
// parse or has a field of the wrong type.
std::string EncodeClass(const core::WorkspaceClass& cls);
absl::StatusOr<core::WorkspaceClass> DecodeClass(absl::string_view json, const Origin& origin);

std::string EncodePool(const core::NodePool& pool);
absl::StatusOr<core::NodePool> DecodePool(absl::string_view json, const Origin& origin);

std::string EncodeDriverPolicy(const core::DriverPolicyEntry& entry);
absl::StatusOr<core::DriverPolicyEntry> DecodeDriverPolicy(absl::string_view json,
                                                           const Origin& origin);

std::string EncodeNodeInfo(const core::NodeInfo& node);
absl::StatusOr<core::NodeInfo> DecodeNodeInfo(absl::string_view json, const Origin& origin);

std::string EncodeHandOff(const core::HandOff& hand_off);
absl::StatusOr<core::HandOff> DecodeHandOff(absl::string_view json, const Origin& origin);

// A scaling_signals row's document: everything but the leader. The pool and
// the generation are written too (the row's columns are the ones queried).
std::string EncodeSignal(const SignalRow& signal);
absl::StatusOr<SignalRow> DecodeSignal(absl::string_view json, const Origin& origin);

}  // namespace wsched::store::documents

#endif  // WSCHED_SERVER_STORE_DOCUMENTS_DOCUMENTS_H_
