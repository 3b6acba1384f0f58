// `wschedctl token create|hash`: make bearer tokens and the hashed lines of
// the tokens file, locally (no server involved).
#ifndef WSCHED_SERVER_CLI_TOKEN_COMMANDS_H_
#define WSCHED_SERVER_CLI_TOKEN_COMMANDS_H_

#include <istream>
#include <string>
#include <vector>

#include "server/cli/options.h"

namespace wsched::cli {

// create: a new random token on the first line of stdout and its tokens-file
// entry on the second. hash: the entry for a token read from `in` (stdin),
// so existing tokens can move to sha256 entries without being re-issued.
int TokenCommand(const std::vector<std::string>& args, const Options& options, std::istream& in);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_TOKEN_COMMANDS_H_
