#include "server/cli/flag_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/simulate/engine.h"
#include "server/simulate/workload.h"

namespace wsched::cli {
namespace {

// The simulator's defaults in its help come from the values a run starts
// with (simulate::PoolTimings, simulate::SimulationOptions), so the two
// cannot drift apart.
std::string SimulateDefault(absl::Duration d) {
  return d == absl::ZeroDuration() ? "0" : absl::FormatDuration(d);
}

const std::string& NodeStartHelp() {
  static const std::string* const help = new std::string(
      absl::StrCat("simulate: every pool's node start time (",
                   SimulateDefault(simulate::PoolTimings{}.node_start), ", the server's default)"));
  return *help;
}

const std::string& DriverInstallHelp() {
  static const std::string* const help = [] {
    const absl::Duration install = simulate::PoolTimings{}.driver_install;
    return new std::string(absl::StrCat("simulate: every GPU pool's driver install time (",
                                        install == absl::ZeroDuration()
                                            ? "0: the node image has the driver"
                                            : absl::StrCat("default ", SimulateDefault(install)),
                                        ")"));
  }();
  return *help;
}

const std::string& LongWaitHelp() {
  static const std::string* const help =
      new std::string(absl::StrCat("simulate: count waits longer than D (default ",
                                   SimulateDefault(simulate::SimulationOptions{}.long_wait), ")"));
  return *help;
}

}  // namespace

const std::vector<FlagSpec>& AllFlags() {
  using K = FlagKind;
  static const std::vector<FlagSpec> kFlags = {
      // Global: connection, output, help.
      {"server", 0, K::kString, "HOST:PORT",
       "wsched-server gRPC address (default: $WSCHED_SERVER, else "
       "127.0.0.1:50051)",
       true},
      {"token", 0, K::kString, "T", "bearer token (default: $WSCHED_TOKEN)",
       true},
      {"token_file", 0, K::kString, "FILE",
       "read the bearer token from FILE (default: $WSCHED_TOKEN_FILE)", true},
      {"timeout", 0, K::kDuration, "D",
       "deadline of each call: 30s, 500ms, 2m (default 30s)", true},
      {"tls", 0, K::kBool, "",
       "connect with TLS (verifying the server against --tls-ca or system "
       "roots)",
       true},
      {"tls_ca", 0, K::kString, "CA.pem",
       "PEM CA bundle to verify the server with (implies --tls)", true},
      {"tls_cert", 0, K::kString, "CERT.pem",
       "PEM client certificate for mutual TLS (implies --tls)", true},
      {"tls_key", 0, K::kString, "KEY.pem", "PEM private key of --tls-cert",
       true},
      {"tls_server_name", 0, K::kString, "NAME",
       "name the server certificate must carry, when --server is an IP or "
       "another name",
       true},
      {"output", 'o', K::kString, "FORMAT",
       "table, wide (more columns), json or yaml (the response, for scripts); "
       "csv for usage",
       true},
      {"no_headers", 0, K::kBool, "", "tables without the header row", true},
      {"help", 'h', K::kBool, "", "usage of wschedctl or of the command", true},
      {"version", 0, K::kBool, "", "same as `wschedctl version`", true},
      // Per command.
      {"filename", 'f', K::kString, "FILE", "apply: the catalog file", false},
      {"dry_run", 0, K::kBool, "",
       "apply, catalog apply: validate and print the diff, change nothing; "
       "place: print every way it could be placed (quotes), place nothing",
       false},
      {"quote_token", 0, K::kString, "T",
       "place: place as the quote of a place --dry-run said, or fail "
       "QUOTE_STALE naming what changed",
       false},
      {"pool", 0, K::kString, "P", "get nodes|workspaces: only this pool",
       false},
      {"node", 0, K::kString, "N",
       "get workspaces: only this node (get nodes --watch: this one); token "
       "create|hash: the one node an agent token speaks for",
       false},
      {"state", 0, K::kString, "S",
       "get workspaces: only this state (pending|placed|stopped|lost); with "
       "--watch a list "
       "(pending,placed; without it the listing holds pending, placed and "
       "lost)",
       false},
      {"watch", 'w', K::kBool, "",
       "get workspaces, get nodes: list, then print each change as it commits, "
       "until Ctrl-C",
       false},
      {"resume_version", 0, K::kInt, "N",
       "get workspaces|nodes --watch: no listing, only the changes after "
       "version N (an earlier "
       "watch prints its last on stderr as it ends; -o json shows each)",
       false},
      {"org", 0, K::kString, "O",
       "place, resolve, project set-default: the org id; get workspaces "
       "--watch: only this org",
       false},
      {"project", 0, K::kString, "P",
       "place, resolve: the project id; get workspaces --watch: only this "
       "project",
       false},
      {"user", 0, K::kString, "U", "place: the user id", false},
      {"class", 0, K::kString, "C",
       "place, resolve: an explicitly requested class; get workspaces --watch: "
       "only this class",
       false},
      {"previous", 0, K::kString, "C",
       "resolve: the class the workspace ran with before", false},
      {"restart", 0, K::kBool, "",
       "place: a restart (the previous class comes before defaults)", false},
      {"priority", 0, K::kInt, "N",
       "place: queue priority 0..100, higher first", false},
      {"default", 0, K::kString, "C",
       "org set: the org's default class (empty clears it)", false},
      {"allow", 0, K::kString, "A,B",
       "org set: comma-separated allowed classes (empty = all)", false},
      {"gpu_quota", 0, K::kInt, "N",
       "org set: max GPUs the org holds at once; -1 = unlimited", false},
      {"expected_version", 0, K::kInt, "N",
       "org set, project set-default, node cordon|drain|uncordon: change only "
       "if the stored "
       "version is still N (the VERSION that get printed)",
       false},
      {"force", 0, K::kBool, "",
       "org set, project set-default: write even if someone changed the "
       "settings meanwhile",
       false},
      {"pool_versions", 0, K::kList, "P=V,..",
       "catalog apply: apply only if each listed pool is still at version V "
       "(get pools -o json)",
       false},
      {"catalog", 0, K::kString, "FILE",
       "simulate: the catalog (file or directory) to replay on", false},
      {"trace", 0, K::kString, "FILE",
       "simulate: the workspaces to replay (CSV: "
       "time,org,project,class,duration_s or end)",
       false},
      {"timings", 0, K::kString, "FILE",
       "simulate: node start and driver install times from `wschedctl pools -o "
       "json`",
       false},
      {"node_start", 0, K::kString, "D", NodeStartHelp(), false},
      {"driver_install", 0, K::kString, "D", DriverInstallHelp(), false},
      {"set", 0, K::kString, "K=V",
       "simulate: change the baseline, e.g. pool.gpu-h100.warm_buffer=2 "
       "(repeatable)",
       false},
      {"variant", 0, K::kString, "NAME:K=V,..",
       "simulate: also replay the baseline with these settings (repeatable)",
       false},
      {"long_wait", 0, K::kString, "D", LongWaitHelp(), false},
      {"chart", 0, K::kString, "FILE",
       "simulate: write an SVG of demand vs nodes per variant", false},
      {"workspaces", 0, K::kInt, "N",
       "simulate trace: how many (default 10000)", false},
      {"days", 0, K::kInt, "N",
       "simulate trace: over how many days (default 7)", false},
      {"seed", 0, K::kInt, "N", "simulate trace: the random seed (default 1)",
       false},
      {"start", 0, K::kString, "TIME",
       "simulate trace: the first day, RFC 3339 (default 2026-03-02T00:00:00Z, "
       "a Monday)",
       false},
      {"mix", 0, K::kString, "C=W,..",
       "simulate trace: class weights (default: classes/saas.yaml's classes)",
       false},
      {"burst_class", 0, K::kString, "C",
       "simulate trace: the class of the bursts' workspaces (default gpu-1x)",
       false},
      {"role", 0, K::kString, "R",
       "token create|hash: admin, control-plane, project-owner, agent, "
       "actuator",
       false},
      {"name", 0, K::kString, "N",
       "token create|hash: the entry's name (default: ROLE-<hash prefix>)",
       false},
      {"orgs", 0, K::kList, "A,B",
       "token create|hash: project-owner orgs, comma-separated", false},
      {"projects", 0, K::kList, "A,B",
       "token create|hash: project-owner projects, comma-separated", false},
      {"pools", 0, K::kList, "A,B",
       "token create|hash: agent pools, comma-separated", false},
      {"bootstrap", 0, K::kBool, "",
       "token create|hash: a bootstrap token: registers new nodes of --pools, "
       "each of which then "
       "uses its own token",
       false},
      {"principal", 0, K::kString, "P", "audit: only records of this principal",
       false},
      {"object", 0, K::kString, "O",
       "audit: only records of this object (node/n-1), or of a type (node/)",
       false},
      {"since", 0, K::kString, "D",
       "audit: only records of the last D (1h, 30m); usage: from this time "
       "(36h back, "
       "2026-10-25, 2026-10-25T00:00:00+02:00)",
       false},
      {"at", 0, K::kString, "T",
       "workspace ready: when it first became ready (RFC 3339; default: the server's now)",
       false},
      {"until", 0, K::kString, "T",
       "usage: up to this time (as --since; default now)", false},
      {"group_by", 0, K::kList, "org,project,class",
       "usage summary: totals per group", false},
      {"bucket", 0, K::kString, "B",
       "usage summary: none, hour, day or month (in --time-zone)", false},
      {"time_zone", 0, K::kString, "Z",
       "usage: IANA zone of the buckets, of dates in --since/--until and of "
       "printed times "
       "(default UTC)",
       false},
  };
  return kFlags;
}

std::string CanonicalFlagName(std::string_view name) {
  std::string canonical(name);
  std::replace(canonical.begin(), canonical.end(), '-', '_');
  return canonical;
}

const FlagSpec* FindFlag(std::string_view name) {
  for (const FlagSpec& flag : AllFlags()) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

const FlagSpec* FindShortFlag(char short_name) {
  if (short_name == 0) return nullptr;
  for (const FlagSpec& flag : AllFlags()) {
    if (flag.short_name == short_name) return &flag;
  }
  return nullptr;
}

std::string DashedFlagName(const FlagSpec& flag) {
  std::string name = absl::StrCat("--", std::string(flag.name));
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::string FlagUsage(const FlagSpec& flag) {
  std::string usage = flag.short_name != 0 ? absl::StrCat("-", std::string(1, flag.short_name), ", ")
                                           : "";
  absl::StrAppend(&usage, DashedFlagName(flag));
  if (flag.kind != FlagKind::kBool) absl::StrAppend(&usage, "=", std::string(flag.value));
  return usage;
}

}  // namespace wsched::cli
