// The NVIDIA driver's user-space side on a node: what a GPU container needs
// besides its device nodes for CUDA to run (libraries, utilities, firmware,
// sockets, the CDI hook), for the loaded driver version only. Read below the
// agent's root, so it runs against the fake trees in tests/sysfs.
#ifndef WSCHED_SERVER_AGENT_DRIVER_FILES_H_
#define WSCHED_SERVER_AGENT_DRIVER_FILES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/agent/rooted_fs.h"

namespace wsched::agent {

// One user-space library of the driver (docs/agent.md lists them all).
struct DriverLibraryName {
  absl::string_view stem;    // "libcuda.so"; the file is <stem>.<driver version>.
  absl::string_view soname;  // "libcuda.so.1"; empty when the versioned name is the soname.
  bool required;             // Without it no CUDA program runs: its absence is a problem.
};
const std::vector<DriverLibraryName>& DriverLibraryNames();
// Utilities mounted when present: nvidia-smi, nvidia-debugdump, ...
const std::vector<absl::string_view>& DriverUtilityNames();

struct DriverLibrary {
  std::string path;         // Node path: "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15".
  std::string soname_path;  // Node path of its soname link; empty when there is none.
};

// The OCI hook that makes the libraries findable inside a container (soname
// links, the container's own linker cache): NVIDIA's where its toolkit is
// installed, else wsched-cdi-hook, which the agent ships (docs/agent.md).
struct CdiHook {
  std::string path;               // "/usr/bin/nvidia-cdi-hook"; empty: none installed.
  std::vector<std::string> argv;  // Leading argv before the subcommand: {"nvidia-cdi-hook"},
                                  // {"nvidia-ctk", "hook"} or {"wsched-cdi-hook"}.
};

struct DriverFiles {
  std::vector<DriverLibrary> libraries;
  std::vector<std::string> library_dirs;  // Directories holding them, for the linker cache hook.
  std::vector<std::string> utilities;     // Node paths.
  std::string firmware_dir;               // "/lib/firmware/nvidia/550.54.15"; empty: none.
  std::vector<std::string> sockets;       // persistenced, fabric manager, MPS.
  CdiHook hook;
  // Why the driver's user space does not match the loaded driver; non-empty
  // means no GPU of the node can run CUDA in a container.
  std::vector<std::string> problems;
};

// Looks in the usual library directories and those listed in
// /etc/ld.so.conf.d/*.conf, and takes a library only when it is an ELF file
// of the node's class and machine (never a multilib node's 32-bit copy).
// `driver_version` is the loaded kernel driver's; an empty version finds
// nothing (and is no problem: no driver, no GPUs). No CDI hook is a problem.
DriverFiles DiscoverDriverFiles(const RootedFs& fs, const std::string& driver_version);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_DRIVER_FILES_H_
