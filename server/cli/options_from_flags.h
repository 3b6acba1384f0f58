// Options for the commands from the parsed flags.
#ifndef WSCHED_SERVER_CLI_OPTIONS_FROM_FLAGS_H_
#define WSCHED_SERVER_CLI_OPTIONS_FROM_FLAGS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "server/cli/arg_parser.h"
#include "server/cli/options.h"

namespace wsched::cli {

// "table", "wide", "json", "yaml"; InvalidArgument otherwise.
absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);

// InvalidArgument for a bad -o; the other values were checked by ParseArgs.
absl::StatusOr<Options> OptionsFromFlags(const ParsedArgs& args);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_OPTIONS_FROM_FLAGS_H_
