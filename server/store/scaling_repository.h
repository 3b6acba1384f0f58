// Published scaling signals and actuator reports.
#ifndef WSCHED_SERVER_STORE_SCALING_REPOSITORY_H_
#define WSCHED_SERVER_STORE_SCALING_REPOSITORY_H_

#include <map>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace wsched::store {

struct StoredSignal {
  std::string pool;
  int64_t generation = 0;
  std::string signal_json;  // v1.PoolSignal as JSON.
  std::string leader;
};

void SaveSignal(pqxx::work& txn, const StoredSignal& signal);
std::vector<StoredSignal> LoadSignals(pqxx::work& txn);

struct ActuatorReportRow {
  int64_t id = 0;
  std::string pool;
  int64_t generation = 0;
  std::string state;  // creating, running, failed, out_of_resources
  int instances = 0;
  std::string detail;
};

void SaveActuatorReport(pqxx::work& txn, const ActuatorReportRow& report);
// Reports with id > after, oldest first.
std::vector<ActuatorReportRow> LoadActuatorReports(pqxx::work& txn, int64_t after);
int64_t LatestActuatorReportId(pqxx::work& txn);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_SCALING_REPOSITORY_H_
