// A fresh, empty PostgreSQL database per test, on the server that the ctest
// fixture (tests/CMakeLists.txt, deploy/local/pg.sh) started.
#ifndef WSCHED_TESTS_SUPPORT_TEST_DATABASE_H_
#define WSCHED_TESTS_SUPPORT_TEST_DATABASE_H_

#include <string>

namespace wsched::testing {

class TestDatabase {
 public:
  // Creates database "t_<pid>_<n>"; aborts the test binary if the server is
  // not reachable (the pg fixture did not run).
  TestDatabase();
  ~TestDatabase();  // Drops it.
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

  // Runs SQL on this database and returns the first column of the first row
  // ("" when there is none).
  std::string Query(const std::string& sql) const;

 private:
  std::string name_;
  std::string url_;
};

// postgresql://postgres@127.0.0.1:<port>/<database>; the port is
// $WSCHED_TEST_PG_PORT when set, else the build's TEST_PG_PORT.
std::string AdminUrl(const std::string& database = "postgres");

}  // namespace wsched::testing

#endif  // WSCHED_TESTS_SUPPORT_TEST_DATABASE_H_
