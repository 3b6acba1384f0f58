// Parsed command-line options shared by the wschedctl command groups. main.cc
// fills this from its flags so command files do not read flags themselves.
#ifndef WSCHED_SERVER_CLI_OPTIONS_H_
#define WSCHED_SERVER_CLI_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsched::cli {

struct Options {
  // --output=json: print each response as JSON (one object per line for streams).
  bool json = false;
  bool dry_run = false;
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
  // `org set`: nullopt = keep the stored value.
  std::optional<std::string> default_class;
  std::optional<std::string> allow;
  std::optional<int64_t> gpu_quota;
  // `token create|hash`: the entry's role, name and scopes.
  std::string role;
  std::string name;
  std::vector<std::string> orgs;
  std::vector<std::string> projects;
  std::vector<std::string> pools;
};

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_OPTIONS_H_
