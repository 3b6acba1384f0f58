#include "server/replica/race_avoidance.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "server/placement/node_ownership.h"
#include "server/store/change_feed.h"

namespace wsched::replica {
namespace {

// Long enough for the winner's commit to reach this replica through the
// feed, short enough that packing resumes at once.
constexpr absl::Duration kContendedFor = absl::Milliseconds(200);
// A replica that wrote no workspace for this long no longer owns nodes.
constexpr absl::Duration kPeerQuietFor = absl::Seconds(10);

}  // namespace

void RaceAvoidance::Contended(const std::string& node, absl::Time now) {
  contended_[node] = now + kContendedFor;
}

void RaceAvoidance::PeerWrote(const std::string& replica, absl::Time now) { peers_[replica] = now; }

placement::Decision RaceAvoidance::Decide(const core::WorkspaceClass& cls,
                                          const core::Catalog& catalog,
                                          const placement::Snapshot& snapshot, absl::Time now) {
  absl::erase_if(contended_, [&](const auto& entry) { return entry.second <= now; });
  absl::erase_if(peers_, [&](const auto& entry) { return now - entry.second > kPeerQuietFor; });
  if (contended_.empty() && peers_.empty()) return placement::Decide(cls, catalog.pools, snapshot);
  std::vector<std::string> peers;
  for (const auto& [peer, seen] : peers_) peers.push_back(peer);
  absl::flat_hash_set<std::string> contended;  // A handful of nodes at most.
  for (const auto& [node, until] : contended_) contended.insert(node);
  const std::string& me = store::ReplicaId();
  return placement::DecideAvoiding(cls, catalog.pools, snapshot, [&](const std::string& node) {
    return contended.contains(node) || !placement::OwnsNode(node, me, peers);
  });
}

}  // namespace wsched::replica
