#include "server/store/lock_lease.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/store/connection.h"
#include "server/store/pg_status.h"

namespace wsched::store {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The server ends the session after `lease` without a word from us: idle
// (idle_session_timeout; the probes keep it busy every interval) or with
// data unacknowledged (tcp_user_timeout, ignored on a Unix socket). Its
// statements end within the probe bound on the server side too.
std::string LockSessionSettings(const LeaseOptions& options, const std::string& name) {
  const int64_t lease_ms = absl::ToInt64Milliseconds(options.lease);
  return absl::StrCat("SET application_name = '", name, "'; SET idle_session_timeout = ", lease_ms,
                      "; SET tcp_user_timeout = ", lease_ms,
                      "; SET statement_timeout = ", absl::ToInt64Milliseconds(options.probe));
}

}  // namespace

absl::Status CheckLeaseOptions(const LeaseOptions& options, absl::Duration interval) {
  if (options.probe <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--database_probe_timeout: must be positive");
  }
  if (options.lease / 2 <= interval + options.probe) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--leader_lease: ", absl::FormatDuration(options.lease),
        " is too short: half of it must exceed the probe interval (",
        absl::FormatDuration(interval), ") plus --database_probe_timeout (",
        absl::FormatDuration(options.probe), "), or a live leader loses its lease between probes"));
  }
  return absl::OkStatus();
}

LockLease::LockLease(std::string url, int64_t key, LeaseOptions options, std::string name)
    : url_(std::move(url)),
      key_(key),
      options_(options),
      session_settings_(LockSessionSettings(options, name)) {}

LockLease::~LockLease() = default;

bool LockLease::Held() const {
  return SteadyNanos() < valid_until_ns_.load(std::memory_order_acquire);
}

void LockLease::Drop() {
  valid_until_ns_.store(0, std::memory_order_release);
  held_ = false;
  connection_.reset();
}

absl::StatusOr<bool> LockLease::Probe(const std::function<void(Connection&, bool held)>& also) {
  const int64_t start = SteadyNanos();
  if (connection_ == nullptr || !connection_->usable()) {
    Drop();
    auto opened = OpenConnection(url_, session_settings_, options_.probe);
    if (!opened.ok()) return opened.status();
    connection_ = std::move(*opened);
  }
  absl::Status status;
  {
    BoundedCall call(*connection_, options_.probe);
    try {
      {
        pqxx::nontransaction txn(*connection_);
        if (held_) {
          txn.exec("SELECT 1");  // The session (and so the lock) is still alive.
        } else {
          held_ = txn.exec_params1("SELECT pg_try_advisory_lock($1)", key_)[0].as<bool>();
        }
      }
      if (also) also(*connection_, held_);
    } catch (...) {
      status = StatusFromCurrentException("lock session");
    }
  }
  status = ExplainAbandoned(*connection_, "lock session", std::move(status));
  if (!status.ok() || !connection_->usable()) {
    Drop();
    if (status.ok()) status = core::DatabaseUnavailableError("lock session: abandoned");
    return status;
  }
  valid_until_ns_.store(held_ ? start + absl::ToInt64Nanoseconds(options_.lease / 2) : 0,
                        std::memory_order_release);
  return held_;
}

void LockLease::Release() { Drop(); }  // Closing the session releases the lock.

}  // namespace wsched::store
