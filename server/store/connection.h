// The store's own way to PostgreSQL: connections and transactions of a
// Database's pool. Only server/store includes it (ctest sql_in_store keeps
// libpqxx out of everything above): everything else runs a UnitOfWork.
#ifndef WSCHED_SERVER_STORE_CONNECTION_H_
#define WSCHED_SERVER_STORE_CONNECTION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/call_watchdog.h"
#include "server/store/database.h"
#include "server/store/migrations.h"

namespace wsched::store {

// A libpqxx connection under the name the store's pqxx-free headers
// forward-declare (database.h), so they can own one. It never reconnects by
// itself (libpqxx would, silently, on a new socket): a broken connection
// stays broken and its owner opens another. Every call on it is bounded by
// the watchdog (call_watchdog.h) through a BoundedCall.
class Connection : public pqxx::connection {
 public:
  // Connects (bounded by the URL's connect_timeout; a broken_connection
  // when that passes) and registers with the watchdog.
  explicit Connection(const std::string& url);
  ~Connection();

  WatchedSocket& watched() { return *watched_; }
  // False once broken or abandoned by the watchdog: drop it.
  bool usable() const { return is_open() && !watched_->abandoned(); }

 private:
  std::unique_ptr<WatchedSocket> watched_;
};

// Arms `connection` for the calls of this scope: if they have not returned
// within `bound` the connection is abandoned (an infinite bound: none).
class BoundedCall {
 public:
  BoundedCall(Connection& connection, absl::Duration bound) : connection_(connection) {
    connection_.watched().Arm(bound);
  }
  ~BoundedCall() { connection_.watched().Disarm(); }
  BoundedCall(const BoundedCall&) = delete;
  BoundedCall& operator=(const BoundedCall&) = delete;

 private:
  Connection& connection_;
};

// `status` of a failed call on `connection`, told as what it was when the
// watchdog abandoned the connection: UNAVAILABLE, DATABASE_UNAVAILABLE with
// RetryInfo, "<what>: no answer from PostgreSQL within <bound>".
absl::Status ExplainAbandoned(Connection& connection, absl::string_view what, absl::Status status);

// The session settings of pooled and group-commit connections: every
// statement PostgreSQL runs for them ends within `call` (statement_timeout),
// and a session left idle in a transaction (its client hung) is ended
// after twice that, releasing its locks.
std::string CallSessionSettings(absl::Duration call);

class Database::Pool {
 public:
  Pool(std::string url, std::string session_settings, absl::Duration bound)
      : url_(std::move(url)), session_settings_(std::move(session_settings)), bound_(bound) {}
  // An idle connection, or a new one when all are busy (it joins the pool
  // on return); the error when none can be opened.
  absl::StatusOr<std::unique_ptr<Connection>> Borrow() ABSL_LOCKS_EXCLUDED(mu_);
  // Broken and abandoned connections are dropped and reopened on demand.
  void Return(std::unique_ptr<Connection> connection) ABSL_LOCKS_EXCLUDED(mu_);
  // Closes every idle connection. After one was abandoned the others are
  // most likely on the same hung server: each would cost a caller a whole
  // bound to find out.
  void DropIdle() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string url_;
  const std::string session_settings_;
  const absl::Duration bound_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
};

// Runs `body` in one transaction and commits when it returns OK; rolls back
// otherwise. Exceptions from libpqxx become a Status (see pg_status.h). The
// whole transaction is bounded by `bound` (db.bounds().call when not given);
// a bound other than that also becomes the transaction's statement_timeout.
absl::Status InTransaction(Database& db, absl::string_view what,
                           const std::function<absl::Status(pqxx::work&)>& body);
absl::Status InTransaction(Database& db, absl::string_view what, absl::Duration bound,
                           const std::function<absl::Status(pqxx::work&)>& body);

// Runs `body` with a borrowed connection (for session-level work such as
// migrations under an advisory lock), bounded by `bound` (db.bounds().call
// when not given; infinite: unbounded).
absl::Status WithConnection(Database& db, absl::string_view what,
                            const std::function<absl::Status(pqxx::connection&)>& body);
absl::Status WithConnection(Database& db, absl::string_view what, absl::Duration bound,
                            const std::function<absl::Status(pqxx::connection&)>& body);

// Opens one connection and runs `session_settings` (SET statements, after
// the store's own `SET jit = off`) on it within `bound`, mapping failures to
// a Status (UNAVAILABLE, DATABASE_UNAVAILABLE when the server cannot be
// reached or does not answer).
absl::StatusOr<std::unique_ptr<Connection>> OpenConnection(
    const std::string& url, const std::string& session_settings = "",
    absl::Duration bound = absl::Seconds(5));

// Applies every migration newer than the database's schema in ONE
// transaction under a transaction-scoped advisory lock, so replicas starting
// together apply each file once. Applying twice is a no-op. A database whose
// schema is newer than `migrations` knows is refused (FAILED_PRECONDITION).
absl::StatusOr<MigrationReport> ApplyMigrations(pqxx::connection& connection,
                                                const std::vector<Migration>& migrations);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CONNECTION_H_
