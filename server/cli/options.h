// Parsed command-line options shared by the wschedctl command groups.
// options_from_flags.cc fills this from the flags so command files do not
// read flags themselves.
#ifndef WSCHED_SERVER_CLI_OPTIONS_H_
#define WSCHED_SERVER_CLI_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace wsched::cli {

// -o: table and wide are for people; json and yaml print the response with
// the proto field names, for scripts.
// csv: only `usage` (the billing export).
enum class OutputFormat { kTable, kWide, kJson, kYaml, kCsv };

// `wschedctl simulate`'s flags, as given; empty = not given.
struct SimulateFlags {
  std::string catalog, trace, timings, chart;
  std::string node_start, driver_install, long_wait;
  std::vector<std::string> sets;      // --set, repeatable
  std::vector<std::string> variants;  // --variant, repeatable
  // `simulate trace`.
  std::string workspaces, days, seed, start, mix, burst_class;
};

struct Options {
  OutputFormat output = OutputFormat::kTable;
  // --no-headers: tables without their header row, for scripts.
  bool no_headers = false;
  bool dry_run = false;
  // apply -f FILE.
  std::string filename;
  // Filters and request fields; empty = not given.
  std::string pool;
  std::string node;
  std::string state;
  std::string org;
  std::string project;
  std::string user;
  std::string class_id;
  std::string previous;
  bool restart = false;
  int priority = 0;
  std::string quote_token;
  // `get workspaces --watch`: list, then follow every change; with
  // --resume-version, only the changes after that version (nullopt = not
  // given; 0 = list first, as without it).
  bool watch = false;
  std::optional<int64_t> resume_version;
  // `org set`: nullopt = keep the stored value.
  std::optional<std::string> default_class;
  std::optional<std::string> allow;
  std::optional<int64_t> gpu_quota;
  // Optimistic concurrency (docs/api.md "Versions"): `org set` and
  // `project set-default` write against the version they read, or against
  // --expected-version when given; --force writes unconditionally. `node
  // cordon|drain|uncordon` check only when --expected-version is given.
  std::optional<int64_t> expected_version;
  bool force = false;
  // `simulate`: its flags as given (simulate_command.cc reads them).
  SimulateFlags simulate;
  // `catalog apply --pool-versions=POOL=V,...`: the pools' versions the
  // caller read (get pools -o json).
  std::vector<std::string> pool_versions;
  // `token create|hash`: the entry's role, name and scopes.
  std::string role;
  std::string name;
  std::vector<std::string> orgs;
  std::vector<std::string> projects;
  std::vector<std::string> pools;
  bool bootstrap = false;
  // `audit`: filters; since = records of the last this long.
  std::string principal;
  std::string object;
  std::optional<absl::Duration> since;
  // --since and --until as given: `usage` reads them as times too.
  std::string since_text;
  std::string until_text;
  // `workspace ready`: when it first became ready (RFC 3339); empty: the
  // server's now.
  std::string at_text;
  // `usage summary`: groups, bucket (none|hour|day|month) and the IANA
  // time zone of the buckets and of printed times.
  std::vector<std::string> group_by;
  std::string bucket;
  std::string time_zone;

  // json or yaml: the response itself rather than a table.
  bool structured() const { return output == OutputFormat::kJson || output == OutputFormat::kYaml; }
  bool wide() const { return output == OutputFormat::kWide; }
};

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_OPTIONS_H_
