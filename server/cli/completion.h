// `wschedctl completion bash|zsh`: completion scripts generated from the
// command, resource and flag tables, so a new command completes at once.
#ifndef WSCHED_SERVER_CLI_COMPLETION_H_
#define WSCHED_SERVER_CLI_COMPLETION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace wsched::cli {

// InvalidArgument for a shell other than bash or zsh.
absl::StatusOr<std::string> CompletionScript(std::string_view shell);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_COMPLETION_H_
