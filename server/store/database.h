// A small pool of PostgreSQL connections with transactional helpers.
// libpqxx connections are not thread-safe; each transaction borrows one.
#ifndef WSCHED_SERVER_STORE_DATABASE_H_
#define WSCHED_SERVER_STORE_DATABASE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace wsched::store {

class Database {
 public:
  // Connects `size` connections; UNAVAILABLE / INVALID_ARGUMENT with a clear
  // message when the URL is bad or the server cannot be reached.
  static absl::StatusOr<std::unique_ptr<Database>> Connect(const std::string& url, int size);

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs `body` in one transaction and commits when it returns OK; rolls back
  // otherwise. Exceptions from libpqxx become a Status (see pg_status.h).
  absl::Status InTransaction(absl::string_view what,
                             const std::function<absl::Status(pqxx::work&)>& body);

  // Runs `body` with a borrowed connection (for session-level work such as
  // advisory locks and LISTEN).
  absl::Status WithConnection(absl::string_view what,
                              const std::function<absl::Status(pqxx::connection&)>& body);

  const std::string& url() const { return url_; }

 private:
  Database(std::string url) : url_(std::move(url)) {}
  std::unique_ptr<pqxx::connection> Borrow();
  void Return(std::unique_ptr<pqxx::connection> connection);

  const std::string url_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
};

// Opens one connection, mapping failures to a Status.
absl::StatusOr<std::unique_ptr<pqxx::connection>> OpenConnection(const std::string& url);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_DATABASE_H_
