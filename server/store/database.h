// A small pool of PostgreSQL connections. libpqxx connections are not
// thread-safe; each transaction borrows one. Transactions run through
// store::UnitOfWork (unit_of_work.h); the store's own code reaches the
// connections through connection.h.
#ifndef WSCHED_SERVER_STORE_DATABASE_H_
#define WSCHED_SERVER_STORE_DATABASE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace wsched::store {

class Connection;  // connection.h

class Database {
 public:
  // Connects `size` connections; UNAVAILABLE / INVALID_ARGUMENT with a clear
  // message when the URL is bad or the server cannot be reached.
  static absl::StatusOr<std::unique_ptr<Database>> Connect(const std::string& url, int size);

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const std::string& url() const { return url_; }

  // The idle connections (connection.h): only the store uses them.
  class Pool;
  Pool& pool() { return *pool_; }

 private:
  explicit Database(std::string url);

  const std::string url_;
  const std::unique_ptr<Pool> pool_;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_DATABASE_H_
