// Several prepared statements in one round trip. libpqxx 6.4's pipeline
// sends what was queued as one simple-protocol message; each statement goes
// as `EXECUTE name(literals)`, so it still runs the server-side prepared
// statement. The group commit uses it to run a batch in a fixed three round
// trips instead of one per statement (docs/architecture.md "The hot path and the group commit").
//
// Results come back in order; a statement that fails throws from Get() and
// the statements queued after it do not run (the transaction is aborted).
#ifndef WSCHED_SERVER_STORE_STATEMENT_PIPELINE_H_
#define WSCHED_SERVER_STORE_STATEMENT_PIPELINE_H_

#include <cstdint>
#include <set>
#include <string>
#include <type_traits>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"

namespace wsched::store {

struct Statement {
  const char* name;
  const char* sql;
};

class StatementPipeline {
 public:
  using Id = pqxx::pipeline::query_id;

  // `session` must not be inside a libpqxx transaction of its own: the
  // pipeline sends BEGIN and COMMIT itself (see Raw).
  explicit StatementPipeline(pqxx::nontransaction& session) : session_(session), pipeline_(session) {
    // Hold everything queued until a result is needed, then send it as one.
    pipeline_.retain(kRetainAll);
  }

  // Makes `statement` exist on the server, so EXECUTE finds it: once per
  // connection, before the first pipeline that runs it.
  static void Prepare(pqxx::connection_base& connection, const Statement& statement) {
    connection.prepare(statement.name, statement.sql);
    connection.prepare_now(statement.name);
  }

  // Queues `statement` with `args` (strings, integers); it is sent with the
  // next Get() of anything not yet sent.
  template <typename... Args>
  Id Execute(const Statement& statement, const Args&... args) {
    std::string sql = absl::StrCat("EXECUTE ", statement.name, "(");
    const char* separator = "";
    ((sql += separator, sql += Literal(args), separator = ", "), ...);
    sql += ")";
    ++executed_;
    return Queue(sql);
  }
  // A statement without parameters, such as BEGIN or COMMIT.
  Id Raw(const std::string& sql) { return Queue(sql); }

  // Waits for the result of `id`, sending everything queued so far first
  // (one round trip for all of it).
  pqxx::result Get(Id id) {
    Send();
    unread_.erase(id);
    return pipeline_.retrieve(id);
  }

  // Sends what is queued and reads every result not read yet, in order:
  // throws if any statement failed.
  void Finish() {
    Send();
    while (!unread_.empty()) Get(*unread_.begin());
  }

  int executed() const { return executed_; }
  int round_trips() const { return round_trips_; }

 private:
  static constexpr int kRetainAll = 1 << 20;

  std::string Literal(const std::string& value) { return session_.quote(value); }
  template <typename Integer, typename = std::enable_if_t<std::is_integral_v<Integer>>>
  std::string Literal(Integer value) {
    return absl::StrCat(value);
  }

  Id Queue(const std::string& sql) {
    Id id = pipeline_.insert(sql);
    unread_.insert(id);
    queued_ = true;
    return id;
  }
  // libpqxx sends all retained statements when a result is asked for.
  void Send() {
    if (!queued_) return;
    ++round_trips_;
    queued_ = false;
  }

  pqxx::nontransaction& session_;
  pqxx::pipeline pipeline_;
  std::set<Id> unread_;
  bool queued_ = false;
  int executed_ = 0;
  int round_trips_ = 0;
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_STATEMENT_PIPELINE_H_
