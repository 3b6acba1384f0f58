// How one replica keeps out of other replicas' way while deciding: nodes
// it just lost a commit race on are avoided for a moment, and while other
// replicas place too, each packs its own share of the nodes
// (placement/node_ownership.h). A value kept under the replica mirror's
// lock (replica_mirror.h): no lock of its own.
#ifndef WSCHED_SERVER_REPLICA_RACE_AVOIDANCE_H_
#define WSCHED_SERVER_REPLICA_RACE_AVOIDANCE_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/placement/decide.h"
#include "server/placement/snapshot.h"

namespace wsched::replica {

class RaceAvoidance {
 public:
  // Another replica's commit won `node` (or is packing it) as of `now`.
  void Contended(const std::string& node, absl::Time now);
  // `replica` wrote workspaces as of `now` (seen in the change feed).
  void PeerWrote(const std::string& replica, absl::Time now);
  // The decision for `cls`, keeping off contended nodes and other
  // replicas' share while other nodes fit.
  placement::Decision Decide(const core::WorkspaceClass& cls, const core::Catalog& catalog,
                             const placement::Snapshot& snapshot, absl::Time now);

 private:
  absl::flat_hash_map<std::string, absl::Time> contended_;  // Node -> avoided until.
  absl::flat_hash_map<std::string, absl::Time> peers_;      // Replica -> last seen writing.
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_RACE_AVOIDANCE_H_
