// Statements the hot path runs many times a second: prepared once per
// connection (parsed and planned once), then executed by name.
#ifndef WSCHED_SERVER_STORE_PREPARED_H_
#define WSCHED_SERVER_STORE_PREPARED_H_

#include <string>
#include <utility>

#include <pqxx/pqxx>

namespace wsched::store {

// Runs `sql` as the prepared statement `name` on the transaction's
// connection. libpqxx registers it with the server on first use per
// connection; later calls with the same name and text only look it up.
template <typename... Args>
pqxx::result ExecPrepared(pqxx::work& txn, const std::string& name, const std::string& sql,
                          Args&&... args) {
  txn.conn().prepare(name, sql);
  return txn.exec_prepared(name, std::forward<Args>(args)...);
}

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_PREPARED_H_
