// -o json and -o yaml: the response itself, with the proto field names as
// keys in both, so a script can switch formats without renaming anything.
#ifndef WSCHED_SERVER_CLI_STRUCTURED_OUTPUT_H_
#define WSCHED_SERVER_CLI_STRUCTURED_OUTPUT_H_

#include <string>

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "server/cli/options.h"

namespace wsched::cli {

// YAML with the same keys and values as `json`; strings a YAML reader would
// take for a number, bool or null are quoted so they stay strings.
std::string JsonToYaml(const nlohmann::ordered_json& json);

// Prints `message` as options.output says (json or yaml); `stream` = one
// item of a watch: one JSON line, or a YAML document after "---".
// Returns the exit code.
int PrintStructured(const google::protobuf::Message& message, const Options& options,
                    bool stream = false);

// The same for a value the CLI builds itself (version, token entries).
int PrintStructured(const nlohmann::ordered_json& json, const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_STRUCTURED_OUTPUT_H_
