// wsched-cdi-hook: the OCI createContainer hook that the agent's CDI spec
// names when NVIDIA's hook is not installed (docs/agent.md, "CDI hook").
// The runtime passes the container's state on stdin; the hook finds the
// container's root and makes the driver's libraries findable there by the
// image's own linker. Errors go to stderr as one line, and a non-zero exit
// makes the runtime refuse to start the container.
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "server/cdi_hook/container_root.h"
#include "server/cdi_hook/hook_command.h"
#include "server/cdi_hook/in_container.h"

namespace {

using namespace wsched::cdi_hook;

constexpr size_t kMaxStateBytes = 1 << 20;

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int Fail(const std::string& message) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::cerr << "wsched-cdi-hook: " << line << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  HookCommand command;
  std::string error;
  if (!ParseHookCommand(args, command, error)) return Fail(error);
  std::string state;
  std::istreambuf_iterator<char> it(std::cin), end;
  while (it != end && state.size() <= kMaxStateBytes) state.push_back(*it++);
  if (state.size() > kMaxStateBytes) return Fail("the container state on stdin is over 1 MiB");
  std::string root = ContainerRoot(state, ReadWholeFile, error);
  if (root.empty()) return Fail(error);
  bool ok = std::holds_alternative<CreateSymlinks>(command)
                ? CreateSymlinksIn(root, std::get<CreateSymlinks>(command), error)
                : UpdateLdcacheIn(root, std::get<UpdateLdcache>(command), error);
  return ok ? 0 : Fail(error);
}
