#include "server/store/placer_lock.h"

#include "absl/strings/str_cat.h"
#include "server/store/connection.h"

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

PlacerLock::PlacerLock(std::string url) : url_(std::move(url)) {}

PlacerLock::~PlacerLock() = default;

absl::StatusOr<PlacerPoll> PlacerLock::Poll(const std::string& replica,
                                             const std::string& address) {
  try {
    if (connection_ == nullptr || !connection_->is_open()) {
      connection_ = std::make_unique<Connection>(url_);
      held_ = false;
    }
    pqxx::nontransaction txn(*connection_);
    if (!held_) {
      held_ = txn.exec_params("SELECT pg_try_advisory_lock($1)", kPlacerLockKey)[0][0].as<bool>();
    }
    if (held_) txn.exec_params(kClaim, replica, address);
    PlacerPoll poll{.held = held_};
    pqxx::result row = txn.exec(kRead);
    if (!row.empty()) {
      poll.placer = PlacerRecord{row[0][0].c_str(), row[0][1].c_str(),
                                 absl::FromUnixMicros(row[0][2].as<int64_t>())};
    }
    return poll;
  } catch (const std::exception& e) {
    connection_.reset();
    held_ = false;
    return absl::UnavailableError(absl::StrCat("placement lock: ", e.what()));
  }
}

void PlacerLock::Release() {
  connection_.reset();  // Closing the session releases the lock.
  held_ = false;
}

}  // namespace wsched::store
