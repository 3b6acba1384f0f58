#include "server/cli/version_command.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "server/cli/build_info.h"
#include "server/cli/structured_output.h"

namespace wsched::cli {

int VersionCommand(const Options& options) {
  if (options.structured()) {
    nlohmann::ordered_json out = {
        {"client", {{"version", BuildVersion()}, {"commit", BuildCommit()}}},
        {"server", {{"version", nullptr}, {"detail", "version not exposed"}}}};
    return PrintStructured(out, options);
  }
  std::cout << "client: wschedctl " << BuildVersion() << " (commit " << BuildCommit() << ")\n"
            << "server: version not exposed\n";
  return 0;
}

}  // namespace wsched::cli
