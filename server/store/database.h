// A small pool of PostgreSQL connections. libpqxx connections are not
// thread-safe; each transaction borrows one. Transactions run through
// store::UnitOfWork (unit_of_work.h); the store's own code reaches the
// connections through connection.h.
#ifndef WSCHED_SERVER_STORE_DATABASE_H_
#define WSCHED_SERVER_STORE_DATABASE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wsched::store {

class Connection;  // connection.h

// How long wsched waits on PostgreSQL (docs/operations.md, "Bounded waits").
// Each bound is enforced on this side (call_watchdog.h: a connection still
// waiting past it is abandoned), so it holds also against a server that
// hangs; `call` is also each pooled session's statement_timeout.
struct DatabaseBounds {
  // One transaction of a call, one group-commit batch (the hot path).
  absl::Duration call = absl::Seconds(5);
  // One batch of a retention sweep (its transaction sets its own
  // statement_timeout).
  absl::Duration sweep = absl::Minutes(5);
  // The health check's query and each probe of a leader's or the placer's
  // lock session: a cheap query that proves the session alive.
  absl::Duration probe = absl::Seconds(1);
};

// `url` with the libpq parameters that bound a connection's waits on the
// network, each added only where `url` does not set it (nor, for
// connect_timeout, PGCONNECT_TIMEOUT): connect_timeout=2 (per host of a
// multi-host URL), keepalives=1, keepalives_idle=5, keepalives_interval=2,
// keepalives_count=3, tcp_user_timeout=10000. Works on URIs
// (postgresql://...) and key=value strings; a URL libpq cannot parse is
// returned as is (connecting reports what is wrong with it).
std::string WithNetworkBounds(const std::string& url);

class Database {
 public:
  // Connects `size` connections to WithNetworkBounds(url); UNAVAILABLE /
  // INVALID_ARGUMENT with a clear message when the URL is bad or the server
  // cannot be reached.
  static absl::StatusOr<std::unique_ptr<Database>> Connect(const std::string& url, int size,
                                                           DatabaseBounds bounds = {});

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // The URL connections are opened with: the operator's, plus the network
  // bounds (WithNetworkBounds).
  const std::string& url() const { return url_; }
  const DatabaseBounds& bounds() const { return bounds_; }

  // Whether the group-commit writer can commit (commit_batcher.h tells):
  // since when it cannot, InfiniteFuture while it can. Health reads it.
  void SetWriterFailing(bool failing);
  absl::Time writer_failing_since() const;

  // The idle connections (connection.h): only the store uses them.
  class Pool;
  Pool& pool() { return *pool_; }

 private:
  Database(std::string url, DatabaseBounds bounds);

  const std::string url_;
  const DatabaseBounds bounds_;
  static constexpr int64_t kNotFailing = INT64_MAX;
  std::atomic<int64_t> writer_failing_since_us_{kNotFailing};  // Unix micros.
  const std::unique_ptr<Pool> pool_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_DATABASE_H_
