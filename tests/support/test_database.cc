#include "tests/support/test_database.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <iostream>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"

namespace wsched::testing {

std::string AdminUrl(const std::string& database) {
  // The environment's port wins, as in the shell tests (tests/cli_test.sh):
  // one build can then run against another checkout's test PostgreSQL.
  const char* port = std::getenv("WSCHED_TEST_PG_PORT");
  return absl::StrCat("postgresql://postgres@127.0.0.1:",
                      port != nullptr && *port != '\0' ? std::string(port)
                                                        : absl::StrCat(WSCHED_TEST_PG_PORT),
                      "/", database);
}

TestDatabase::TestDatabase() {
  static std::atomic<int> counter{0};
  name_ = absl::StrCat("t_", getpid(), "_", counter++);
  url_ = AdminUrl(name_);
  try {
    pqxx::connection admin(AdminUrl());
    pqxx::nontransaction txn(admin);
    txn.exec(absl::StrCat("DROP DATABASE IF EXISTS ", name_));
    txn.exec(absl::StrCat("CREATE DATABASE ", name_));
  } catch (const std::exception& e) {
    std::cerr << "test PostgreSQL unavailable (is the pg fixture running?): " << e.what() << "\n";
    std::abort();
  }
}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(AdminUrl());
    pqxx::nontransaction txn(admin);
    txn.exec(absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)"));
  } catch (const std::exception& e) {
    std::cerr << "dropping " << name_ << ": " << e.what() << "\n";
  }
}

std::string TestDatabase::Query(const std::string& sql) const {
  pqxx::connection connection(url_);
  pqxx::nontransaction txn(connection);
  pqxx::result result = txn.exec(sql);
  if (result.empty() || result[0][0].is_null()) return "";
  return result[0][0].c_str();
}

}  // namespace wsched::testing
