#include "server/store/leader_lock.h"

#include "server/store/connection.h"

namespace wsched::store {

LeaderLock::LeaderLock(std::string url, int64_t key) : url_(std::move(url)), key_(key) {}

LeaderLock::~LeaderLock() = default;

bool LeaderLock::TryAcquire() {
  try {
    if (connection_ == nullptr || !connection_->is_open()) {
      connection_ = std::make_unique<Connection>(url_);
      held_ = false;
    }
    pqxx::nontransaction txn(*connection_);
    if (held_) {
      txn.exec("SELECT 1");  // The session (and so the lock) is still alive.
      return true;
    }
    held_ = txn.exec_params("SELECT pg_try_advisory_lock($1)", key_)[0][0].as<bool>();
    return held_;
  } catch (const std::exception&) {
    connection_.reset();
    held_ = false;
    return false;
  }
}

void LeaderLock::Release() {
  connection_.reset();  // Closing the session releases the lock.
  held_ = false;
}

}  // namespace wsched::store
