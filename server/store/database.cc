#include "server/store/database.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/store/connection.h"
#include "server/store/pg_status.h"

namespace wsched::store {

absl::StatusOr<std::unique_ptr<Connection>> OpenConnection(const std::string& url) {
  try {
    auto connection = std::make_unique<Connection>(url);
    // Every statement wsched runs is short. JIT compilation pays off only for
    // long queries, and a cost misestimate (a table never analyzed, say)
    // would spend 100+ ms compiling a lookup that runs in a fraction of one.
    pqxx::nontransaction(*connection).exec0("SET jit = off");
    return connection;
  } catch (const pqxx::broken_connection& e) {
    return core::DatabaseUnavailableError(
        absl::StrCat("cannot connect to PostgreSQL (--database_url): ", e.what()));
  } catch (const pqxx::sql_error& e) {
    return absl::FailedPreconditionError(
        absl::StrCat("PostgreSQL refused the session settings (SET jit = off; PostgreSQL 15 expected): ",
                     e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad database URL (--database_url): ", e.what()));
  }
}

Database::Database(std::string url) : url_(std::move(url)), pool_(std::make_unique<Pool>(url_)) {}

absl::StatusOr<std::unique_ptr<Database>> Database::Connect(const std::string& url, int size) {
  std::unique_ptr<Database> db(new Database(url));
  for (int i = 0; i < size; ++i) {
    auto connection = OpenConnection(url);
    if (!connection.ok()) return connection.status();
    db->pool().Return(std::move(*connection));
  }
  return db;
}

Database::~Database() = default;

std::unique_ptr<Connection> Database::Pool::Borrow() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  // All busy: open another rather than wait; it joins the pool on return.
  auto connection = OpenConnection(url_);
  return connection.ok() ? std::move(*connection) : nullptr;
}

void Database::Pool::Return(std::unique_ptr<Connection> connection) {
  if (connection == nullptr || !connection->is_open()) return;  // Dropped; reopened on demand.
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

absl::Status WithConnection(Database& db, absl::string_view what,
                            const std::function<absl::Status(pqxx::connection&)>& body) {
  auto connection = db.pool().Borrow();
  if (connection == nullptr) {
    return core::DatabaseUnavailableError(absl::StrCat(what, ": database unreachable"));
  }
  absl::Status status;
  try {
    status = body(*connection);
  } catch (...) {
    status = StatusFromCurrentException(what);
  }
  db.pool().Return(std::move(connection));
  return status;
}

absl::Status InTransaction(Database& db, absl::string_view what,
                           const std::function<absl::Status(pqxx::work&)>& body) {
  return WithConnection(db, what, [&](pqxx::connection& connection) -> absl::Status {
    pqxx::work txn(connection);
    absl::Status status = body(txn);
    if (status.ok()) {
      txn.commit();
    } else {
      txn.abort();
    }
    return status;
  });
}

}  // namespace wsched::store
