#include "server/store/placer_lock.h"

#include "absl/strings/str_cat.h"
#include "server/store/connection.h"
#include "server/store/pg_status.h"

namespace wsched::store {
namespace {

constexpr int64_t kPlacerLockKey = 0x77736368'706c6163;  // "wschplac"

// Rewrites the row only when it names someone else, so a steady placer's
// poll is a read.
constexpr char kClaim[] =
    "INSERT INTO placer (replica, address) VALUES ($1, $2) "
    "ON CONFLICT (only_row) DO UPDATE SET replica = excluded.replica, "
    "address = excluded.address, since = now() "
    "WHERE placer.replica <> excluded.replica OR placer.address <> excluded.address";

constexpr char kRead[] =
    "SELECT replica, address, (extract(epoch FROM since) * 1000000)::int8 FROM placer";

}  // namespace

PlacerLock::PlacerLock(std::string url, LeaseOptions lease)
    : lease_(std::move(url), kPlacerLockKey, lease, "wsched placer lock") {}

PlacerLock::~PlacerLock() = default;

absl::StatusOr<PlacerPoll> PlacerLock::Poll(const std::string& replica,
                                             const std::string& address) {
  PlacerPoll poll;
  // The claim and the read are part of the probe: the same session, the
  // same bound.
  absl::StatusOr<bool> held = lease_.Probe([&](Connection& connection, bool held) {
    pqxx::nontransaction txn(connection);
    if (held) txn.exec_params(kClaim, replica, address);
    pqxx::result row = txn.exec(kRead);
    if (!row.empty()) {
      poll.placer = PlacerRecord{row[0][0].c_str(), row[0][1].c_str(),
                                 absl::FromUnixMicros(row[0][2].as<int64_t>())};
    }
  });
  if (!held.ok()) {
    return Prefixed("placement lock", held.status());
  }
  poll.held = *held;
  return poll;
}

void PlacerLock::Release() { lease_.Release(); }

}  // namespace wsched::store
