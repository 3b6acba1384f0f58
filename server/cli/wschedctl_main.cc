// wschedctl: the admin/operator CLI. Thin: run.cc parses and dispatches;
// each command group lives in its own file.
#include <iostream>
#include <string>
#include <vector>

#include "server/cli/connection_settings.h"
#include "server/cli/run.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return wsched::cli::Run(args, std::cin, wsched::cli::ProcessEnvironment());
}
