#include "server/cdi_hook/hook_command.h"

namespace wsched::cdi_hook {
namespace {

// Paths inside the container: absolute, no "..", no line breaks (they go
// into ld.so.conf one per line), bounded.
bool CheckContainerPath(const std::string& flag, const std::string& path, std::string& error) {
  constexpr size_t kMaxPath = 4096;
  if (path.empty() || path[0] != '/') {
    error = flag + " " + path + ": must be an absolute path";
  } else if (path.size() > kMaxPath) {
    error = flag + ": longer than 4096 bytes";
  } else if (path.find('\n') != std::string::npos || path.find('\r') != std::string::npos ||
             path.find('\0') != std::string::npos) {
    error = flag + ": must not contain a line break or NUL";
  } else if (path.find("/../") != std::string::npos ||
             (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0)) {
    error = flag + " " + path + ": must not contain \"..\"";
  } else {
    return true;
  }
  return false;
}

bool ParseSymlinks(const std::vector<std::string>& args, CreateSymlinks& command,
                   std::string& error) {
  for (size_t i = 1; i < args.size(); i += 2) {
    if (args[i] != "--link" || i + 1 >= args.size()) {
      error = "create-symlinks: expected --link TARGET::LINK, got \"" + args[i] + "\"";
      return false;
    }
    const std::string& value = args[i + 1];
    size_t separator = value.find("::");
    if (separator == std::string::npos || separator == 0) {
      error = "--link " + value + ": must be TARGET::LINK";
      return false;
    }
    Symlink link{value.substr(0, separator), value.substr(separator + 2)};
    if (!CheckContainerPath("--link", link.link, error)) return false;
    command.links.push_back(std::move(link));
  }
  return true;
}

bool ParseLdcache(const std::vector<std::string>& args, UpdateLdcache& command,
                  std::string& error) {
  for (size_t i = 1; i < args.size(); i += 2) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size() || (flag != "--folder" && flag != "--ldconfig-path")) {
      error = "update-ldcache: expected --folder DIR or --ldconfig-path PATH, got \"" + flag + "\"";
      return false;
    }
    if (!CheckContainerPath(flag, args[i + 1], error)) return false;
    if (flag == "--folder") {
      command.folders.push_back(args[i + 1]);
    } else {
      command.ldconfig_path = args[i + 1];
    }
  }
  return true;
}

}  // namespace

bool ParseHookCommand(const std::vector<std::string>& args, HookCommand& command,
                      std::string& error) {
  if (args.empty()) {
    error = "a subcommand is required: create-symlinks or update-ldcache";
    return false;
  }
  if (args[0] == "create-symlinks") {
    CreateSymlinks symlinks;
    if (!ParseSymlinks(args, symlinks, error)) return false;
    command = std::move(symlinks);
    return true;
  }
  if (args[0] == "update-ldcache") {
    UpdateLdcache ldcache;
    if (!ParseLdcache(args, ldcache, error)) return false;
    command = std::move(ldcache);
    return true;
  }
  error = "unknown subcommand \"" + args[0] + "\": expected create-symlinks or update-ldcache";
  return false;
}

}  // namespace wsched::cdi_hook
