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
#include "server/store/database.h"
#include "server/store/migrations.h"

namespace wsched::store {

// A libpqxx connection under the name the store's pqxx-free headers
// forward-declare (database.h), so they can own one.
class Connection : public pqxx::connection {
 public:
  using pqxx::connection::connection;
};

class Database::Pool {
 public:
  explicit Pool(std::string url) : url_(std::move(url)) {}
  // An idle connection, or a new one when all are busy (it joins the pool
  // on return); null when none can be opened.
  std::unique_ptr<Connection> Borrow() ABSL_LOCKS_EXCLUDED(mu_);
  // Broken connections are dropped and reopened on demand.
  void Return(std::unique_ptr<Connection> connection) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string url_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
};

// Runs `body` in one transaction and commits when it returns OK; rolls back
// otherwise. Exceptions from libpqxx become a Status (see pg_status.h).
absl::Status InTransaction(Database& db, absl::string_view what,
                           const std::function<absl::Status(pqxx::work&)>& body);

// Runs `body` with a borrowed connection (for session-level work such as
// migrations under an advisory lock).
absl::Status WithConnection(Database& db, absl::string_view what,
                            const std::function<absl::Status(pqxx::connection&)>& body);

// Opens one connection, mapping failures to a Status.
absl::StatusOr<std::unique_ptr<Connection>> OpenConnection(const std::string& url);

// Applies every migration newer than the database's schema in ONE
// transaction under a transaction-scoped advisory lock, so replicas starting
// together apply each file once. Applying twice is a no-op. A database whose
// schema is newer than `migrations` knows is refused (FAILED_PRECONDITION).
absl::StatusOr<MigrationReport> ApplyMigrations(pqxx::connection& connection,
                                                const std::vector<Migration>& migrations);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CONNECTION_H_
