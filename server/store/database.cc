#include "server/store/database.h"

#include <fcntl.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/core/error_reason.h"
#include "server/store/connection.h"
#include "server/store/pg_status.h"

namespace wsched::store {
namespace {

// The libpq parameters WithNetworkBounds adds (docs/operations.md, "Bounded
// waits"). keepalives find a peer that vanished while the connection is
// idle (5 + 3 * 2 = 11 s); tcp_user_timeout one that vanished while data
// is in flight (10 s unacknowledged). Neither finds a server that hangs
// with its kernel alive: the watchdog does (call_watchdog.h).
const std::vector<std::pair<const char*, const char*>>& NetworkBoundParameters() {
  static const auto* parameters = new std::vector<std::pair<const char*, const char*>>{
      {"connect_timeout", "2"},   {"keepalives", "1"},       {"keepalives_idle", "5"},
      {"keepalives_interval", "2"}, {"keepalives_count", "3"}, {"tcp_user_timeout", "10000"}};
  return *parameters;
}

// The parameters `url` sets itself; nullopt when libpq cannot parse it.
std::optional<std::set<std::string>> ParametersSet(const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    if (error != nullptr) PQfreemem(error);
    return std::nullopt;
  }
  std::set<std::string> set;
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr && option->val[0] != '\0') set.insert(option->keyword);
  }
  PQconninfoFree(options);
  return set;
}

std::string Milliseconds(absl::Duration d) {
  return d == absl::InfiniteDuration() ? "0" : absl::StrCat(absl::ToInt64Milliseconds(d));
}

}  // namespace

std::string WithNetworkBounds(const std::string& url) {
  std::optional<std::set<std::string>> given = ParametersSet(url);
  if (!given.has_value()) return url;
  const bool uri = absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://");
  std::string out = url;
  for (const auto& [key, value] : NetworkBoundParameters()) {
    if (given->count(key) > 0) continue;
    if (absl::string_view(key) == "connect_timeout" && std::getenv("PGCONNECT_TIMEOUT") != nullptr) {
      continue;
    }
    if (uri) {
      const bool has_query = absl::StrContains(out, '?');
      if (!has_query) {
        out += '?';
      } else if (out.back() != '?' && out.back() != '&') {
        out += '&';
      }
    } else if (!out.empty()) {
      out += ' ';
    }
    absl::StrAppend(&out, key, "=", value);
  }
  return out;
}

Connection::Connection(const std::string& url) : pqxx::connection(url) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // A silent reconnect would swap the socket the watchdog watches and lose
  // the session's settings and prepared statements.
  inhibit_reactivation(true);
#pragma GCC diagnostic pop
  const int fd = sock();
  watched_ = std::make_unique<WatchedSocket>(fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1);
  CallWatchdog::Global().Watch(watched_.get());
}

Connection::~Connection() {
  // Before the socket closes (the members, then the base class): the
  // watchdog must not shut down a descriptor that no longer names it.
  CallWatchdog::Global().Forget(watched_.get());
}

absl::Status ExplainAbandoned(Connection& connection, absl::string_view what, absl::Status status) {
  if (status.ok() || !connection.watched().abandoned()) return status;
  return core::DatabaseUnavailableError(absl::StrCat(
      what, ": no answer from PostgreSQL within ",
      absl::FormatDuration(connection.watched().bound()),
      "; the connection was abandoned (a hung or unreachable server; see docs/operations.md, "
      "\"Bounded waits\")"));
}

std::string CallSessionSettings(absl::Duration call) {
  return absl::StrCat("SET statement_timeout = ", Milliseconds(call),
                      "; SET idle_in_transaction_session_timeout = ", Milliseconds(2 * call));
}

absl::StatusOr<std::unique_ptr<Connection>> OpenConnection(const std::string& url,
                                                          const std::string& session_settings,
                                                          absl::Duration bound) {
  std::unique_ptr<Connection> connection;
  try {
    connection = std::make_unique<Connection>(url);
  } catch (const pqxx::broken_connection& e) {
    return core::DatabaseUnavailableError(
        absl::StrCat("cannot connect to PostgreSQL (--database_url): ", e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad database URL (--database_url): ", e.what()));
  }
  try {
    BoundedCall call(*connection, bound);
    // Every statement wsched runs is short. JIT compilation pays off only for
    // long queries, and a cost misestimate (a table never analyzed, say)
    // would spend 100+ ms compiling a lookup that runs in a fraction of one.
    // One round trip for all the settings.
    std::string settings = "SET jit = off";
    if (!session_settings.empty()) absl::StrAppend(&settings, "; ", session_settings);
    pqxx::nontransaction(*connection).exec(settings);
    return connection;
  } catch (const pqxx::broken_connection&) {
    return ExplainAbandoned(*connection, "connecting to PostgreSQL",
                            StatusFromCurrentException("connecting to PostgreSQL"));
  } catch (const pqxx::sql_error& e) {
    return absl::FailedPreconditionError(absl::StrCat(
        "PostgreSQL refused the session settings (", e.query(), "; PostgreSQL 15 expected): ",
        e.what()));
  } catch (...) {
    return ExplainAbandoned(*connection, "connecting to PostgreSQL",
                            StatusFromCurrentException("connecting to PostgreSQL"));
  }
}

Database::Database(std::string url, DatabaseBounds bounds)
    : url_(WithNetworkBounds(url)),
      bounds_(bounds),
      pool_(std::make_unique<Pool>(url_, CallSessionSettings(bounds.call), bounds.call)) {}

absl::StatusOr<std::unique_ptr<Database>> Database::Connect(const std::string& url, int size,
                                                           DatabaseBounds bounds) {
  std::unique_ptr<Database> db(new Database(url, bounds));
  for (int i = 0; i < size; ++i) {
    auto connection = db->pool().Borrow();
    if (!connection.ok()) return connection.status();
    db->pool().Return(std::move(*connection));
  }
  return db;
}

Database::~Database() = default;

void Database::SetWriterFailing(bool failing) {
  if (!failing) {
    writer_failing_since_us_.store(kNotFailing, std::memory_order_relaxed);
    return;
  }
  // The first failure dates the outage; later ones keep it.
  int64_t expected = kNotFailing;
  writer_failing_since_us_.compare_exchange_strong(expected, absl::ToUnixMicros(absl::Now()),
                                                   std::memory_order_relaxed);
}

absl::Time Database::writer_failing_since() const {
  const int64_t since = writer_failing_since_us_.load(std::memory_order_relaxed);
  return since == kNotFailing ? absl::InfiniteFuture() : absl::FromUnixMicros(since);
}

absl::StatusOr<std::unique_ptr<Connection>> Database::Pool::Borrow() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      auto connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  // All busy: open another rather than wait; it joins the pool on return.
  return OpenConnection(url_, session_settings_, bound_);
}

void Database::Pool::Return(std::unique_ptr<Connection> connection) {
  if (connection == nullptr || !connection->usable()) return;  // Dropped; reopened on demand.
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

void Database::Pool::DropIdle() {
  std::vector<std::unique_ptr<Connection>> dropped;
  {
    absl::MutexLock lock(&mu_);
    dropped.swap(idle_);
  }
  // Closed outside the lock (a close sends a Terminate message).
}

absl::Status WithConnection(Database& db, absl::string_view what,
                            const std::function<absl::Status(pqxx::connection&)>& body) {
  return WithConnection(db, what, db.bounds().call, body);
}

absl::Status WithConnection(Database& db, absl::string_view what, absl::Duration bound,
                            const std::function<absl::Status(pqxx::connection&)>& body) {
  auto connection = db.pool().Borrow();
  if (!connection.ok()) {
    absl::Status status = connection.status();
    if (absl::IsUnavailable(status)) {
      return core::DatabaseUnavailableError(
          absl::StrCat(what, ": database unreachable: ", status.message()));
    }
    return status;
  }
  absl::Status status;
  {
    BoundedCall call(**connection, bound);
    try {
      status = body(**connection);
    } catch (...) {
      status = StatusFromCurrentException(what);
    }
  }
  status = ExplainAbandoned(**connection, what, std::move(status));
  if ((*connection)->watched().abandoned()) db.pool().DropIdle();
  db.pool().Return(std::move(*connection));
  return status;
}

absl::Status InTransaction(Database& db, absl::string_view what,
                           const std::function<absl::Status(pqxx::work&)>& body) {
  return InTransaction(db, what, db.bounds().call, body);
}

absl::Status InTransaction(Database& db, absl::string_view what, absl::Duration bound,
                           const std::function<absl::Status(pqxx::work&)>& body) {
  return WithConnection(db, what, bound, [&](pqxx::connection& connection) -> absl::Status {
    pqxx::work txn(connection);
    // The session's statement_timeout is the call bound; a longer bound
    // (a sweep) lifts it for this transaction only.
    if (bound != db.bounds().call) {
      txn.exec0(absl::StrCat("SET LOCAL statement_timeout = ", Milliseconds(bound)));
    }
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
