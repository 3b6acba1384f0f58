#include "server/agent/driver_files.h"

#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/agent/elf_identity.h"

namespace wsched::agent {
namespace {

// Where distributions and NVIDIA's .run installer put the libraries.
constexpr absl::string_view kLibraryDirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
    "/lib/x86_64-linux-gnu",     "/lib/aarch64-linux-gnu",     "/lib64",     "/usr/local/nvidia/lib64"};
constexpr absl::string_view kBinaryDirs[] = {"/usr/bin", "/usr/sbin", "/usr/local/bin",
                                             "/usr/local/nvidia/bin", "/bin"};
// Where the Helm chart's init container copies wsched's hook on the host.
constexpr absl::string_view kWschedHookDirs[] = {"/opt/wsched/bin"};
constexpr absl::string_view kWschedCdiHook = "wsched-cdi-hook";
constexpr absl::string_view kFirmwareDirs[] = {"/lib/firmware/nvidia", "/usr/lib/firmware/nvidia"};
constexpr absl::string_view kSockets[] = {"/run/nvidia-persistenced/socket",
                                          "/run/nvidia-fabricmanager/socket", "/tmp/nvidia-mps"};

std::string Join(absl::string_view dir, absl::string_view name) { return absl::StrCat(dir, "/", name); }

// The usual directories, then those the linker is configured with, each
// once (merged-/usr systems alias /lib to /usr/lib).
std::vector<std::string> LibraryDirs(const RootedFs& fs) {
  std::vector<std::string> candidates(std::begin(kLibraryDirs), std::end(kLibraryDirs));
  absl::StatusOr<std::vector<std::string>> confs = fs.ListDir("/etc/ld.so.conf.d");
  for (const std::string& conf : confs.ok() ? *confs : std::vector<std::string>{}) {
    if (!absl::EndsWith(conf, ".conf")) continue;
    absl::StatusOr<std::string> text = fs.ReadFile(Join("/etc/ld.so.conf.d", conf));
    if (!text.ok()) continue;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (absl::StartsWith(line, "/")) candidates.emplace_back(absl::StripSuffix(line, "/"));
    }
  }
  std::vector<std::string> dirs;
  std::set<std::string> seen;
  for (const std::string& dir : candidates) {
    absl::StatusOr<std::filesystem::path> real = fs.Resolve(dir);
    if (!real.ok() || !std::filesystem::is_directory(*real)) continue;
    if (seen.insert(real->lexically_normal().string()).second) dirs.push_back(dir);
  }
  return dirs;
}

// "535.104.05" of "libcuda.so.535.104.05": the version part of a file of
// `stem` that is not the soname (a dotted version with at least two parts).
std::string VersionOf(absl::string_view file, absl::string_view stem) {
  if (!absl::ConsumePrefix(&file, stem) || !absl::ConsumePrefix(&file, ".")) return "";
  std::vector<absl::string_view> parts = absl::StrSplit(file, '.');
  if (parts.size() < 2) return "";
  for (absl::string_view part : parts) {
    if (part.empty() || !std::all_of(part.begin(), part.end(), absl::ascii_isdigit)) return "";
  }
  return std::string(file);
}

// Other versions of `stem` present: the sign of a driver upgraded on disk
// while the old kernel module still runs (or the reverse).
std::vector<std::string> OtherVersions(const RootedFs& fs, const std::vector<std::string>& dirs,
                                       absl::string_view stem) {
  std::set<std::string> versions;
  for (const std::string& dir : dirs) {
    absl::StatusOr<std::vector<std::string>> files = fs.ListDir(dir);
    for (const std::string& file : files.ok() ? *files : std::vector<std::string>{}) {
      if (std::string version = VersionOf(file, stem); !version.empty()) versions.insert(version);
    }
  }
  return {versions.begin(), versions.end()};
}

std::string MissingLibraryProblem(const RootedFs& fs, const std::vector<std::string>& dirs,
                                  absl::string_view stem, const std::string& version) {
  std::vector<std::string> others = OtherVersions(fs, dirs, stem);
  if (!others.empty()) {
    return absl::StrCat(stem, " is ", absl::StrJoin(others, ", "), " but the loaded driver is ",
                        version, " (reboot or reload the driver after an upgrade)");
  }
  return absl::StrCat(stem, ".", version, " not found in ",
                      dirs.empty() ? "any library directory" : absl::StrJoin(dirs, ", "));
}

// The first file named `file` in `dirs` that the node's containers can
// load: an ELF file of the node's class and machine. Files of another kind
// (the 32-bit copies of a multilib node) are passed over and listed in
// `passed_over`, whatever the directory order.
std::optional<std::string> FindLoadable(const RootedFs& fs, const std::vector<std::string>& dirs,
                                        const std::string& file,
                                        std::vector<std::string>& passed_over) {
  const ElfIdentity node = NodeElfIdentity();
  for (const std::string& dir : dirs) {
    std::string path = Join(dir, file);
    if (!fs.Exists(path)) continue;
    absl::StatusOr<std::string> head = fs.ReadHead(path, kElfIdentityBytes);
    std::optional<ElfIdentity> identity =
        head.ok() ? ReadElfIdentity(*head) : std::optional<ElfIdentity>();
    if (identity == node) return path;
    passed_over.push_back(
        absl::StrCat(path, " (", identity ? DescribeElf(*identity) : "not an ELF file", ")"));
  }
  return std::nullopt;
}

void FindLibraries(const RootedFs& fs, const std::string& version, DriverFiles& files) {
  std::vector<std::string> dirs = LibraryDirs(fs);
  std::set<std::string> used_dirs;
  for (const DriverLibraryName& name : DriverLibraryNames()) {
    std::string file = absl::StrCat(name.stem, ".", version);
    std::vector<std::string> passed_over;
    std::optional<std::string> path = FindLoadable(fs, dirs, file, passed_over);
    if (path.has_value()) {
      std::string dir = path->substr(0, path->rfind('/'));
      files.libraries.push_back({*path, name.soname.empty() ? "" : Join(dir, name.soname)});
      if (used_dirs.insert(dir).second) files.library_dirs.push_back(dir);
    } else if (name.required && !passed_over.empty()) {
      files.problems.push_back(absl::StrCat("no ", DescribeElf(NodeElfIdentity()), " ", file,
                                            ", only ", absl::StrJoin(passed_over, ", ")));
    } else if (name.required) {
      files.problems.push_back(MissingLibraryProblem(fs, dirs, name.stem, version));
    }
  }
}

std::string FindBinary(const RootedFs& fs, absl::string_view name) {
  for (absl::string_view dir : kBinaryDirs) {
    if (fs.Exists(Join(dir, name))) return Join(dir, name);
  }
  return "";
}

// NVIDIA's hook where the toolkit is installed (it knows more special cases
// and is kept up by NVIDIA), else wsched's own, which the agent ships with
// the same two subcommands. The hook is what makes the libraries findable:
// a spec that bound them at the node's paths without one would work only in
// images whose linker happens to search those directories.
CdiHook FindCdiHook(const RootedFs& fs) {
  if (std::string hook = FindBinary(fs, "nvidia-cdi-hook"); !hook.empty()) {
    return {hook, {"nvidia-cdi-hook"}};
  }
  if (std::string ctk = FindBinary(fs, "nvidia-ctk"); !ctk.empty()) {
    return {ctk, {"nvidia-ctk", "hook"}};
  }
  std::string own = FindBinary(fs, kWschedCdiHook);
  for (absl::string_view dir : kWschedHookDirs) {
    if (own.empty() && fs.Exists(Join(dir, kWschedCdiHook))) own = Join(dir, kWschedCdiHook);
  }
  if (own.empty()) return {};
  return {own, {std::string(kWschedCdiHook)}};
}

std::string NoHookProblem() {
  return absl::StrCat("no CDI hook: neither NVIDIA's nvidia-cdi-hook or nvidia-ctk nor ",
                      kWschedCdiHook, " is installed (", absl::StrJoin(kBinaryDirs, ", "), ", ",
                      absl::StrJoin(kWschedHookDirs, ", "),
                      "), so a container's linker could not find the driver's libraries");
}

}  // namespace

const std::vector<DriverLibraryName>& DriverLibraryNames() {
  static const auto* names = new std::vector<DriverLibraryName>{
      // Utility and compute: what nvidia-smi and CUDA programs load.
      {"libnvidia-ml.so", "libnvidia-ml.so.1", true},
      {"libcuda.so", "libcuda.so.1", true},
      {"libnvidia-cfg.so", "libnvidia-cfg.so.1", false},
      {"libcudadebugger.so", "libcudadebugger.so.1", false},
      {"libnvidia-ptxjitcompiler.so", "libnvidia-ptxjitcompiler.so.1", false},
      {"libnvidia-nvvm.so", "libnvidia-nvvm.so.4", false},
      {"libnvidia-gpucomp.so", "", false},
      {"libnvidia-allocator.so", "libnvidia-allocator.so.1", false},
      {"libnvidia-opencl.so", "libnvidia-opencl.so.1", false},
      {"libnvidia-pkcs11.so", "", false},
      {"libnvidia-pkcs11-openssl3.so", "", false},
      // Video: encode/decode sessions.
      {"libnvcuvid.so", "libnvcuvid.so.1", false},
      {"libnvidia-encode.so", "libnvidia-encode.so.1", false},
      {"libnvidia-opticalflow.so", "libnvidia-opticalflow.so.1", false},
      // Graphics and ray tracing, for workspaces that render.
      {"libnvidia-eglcore.so", "", false},
      {"libnvidia-glcore.so", "", false},
      {"libnvidia-tls.so", "", false},
      {"libnvidia-glsi.so", "", false},
      {"libnvidia-glvkspirv.so", "", false},
      {"libnvidia-rtcore.so", "", false},
      {"libnvoptix.so", "libnvoptix.so.1", false},
      {"libEGL_nvidia.so", "libEGL_nvidia.so.0", false},
      {"libGLX_nvidia.so", "libGLX_nvidia.so.0", false},
      {"libGLESv2_nvidia.so", "libGLESv2_nvidia.so.2", false},
      {"libGLESv1_CM_nvidia.so", "libGLESv1_CM_nvidia.so.1", false},
  };
  return *names;
}

const std::vector<absl::string_view>& DriverUtilityNames() {
  static const auto* names = new std::vector<absl::string_view>{
      "nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control",
      "nvidia-cuda-mps-server"};
  return *names;
}

DriverFiles DiscoverDriverFiles(const RootedFs& fs, const std::string& driver_version) {
  DriverFiles files;
  if (driver_version.empty()) return files;
  FindLibraries(fs, driver_version, files);
  for (absl::string_view name : DriverUtilityNames()) {
    if (std::string path = FindBinary(fs, name); !path.empty()) files.utilities.push_back(path);
  }
  for (absl::string_view dir : kFirmwareDirs) {
    std::string candidate = Join(dir, driver_version);
    if (fs.Exists(candidate)) {
      files.firmware_dir = candidate;
      break;
    }
  }
  for (absl::string_view socket : kSockets) {
    if (fs.Exists(socket)) files.sockets.emplace_back(socket);
  }
  files.hook = FindCdiHook(fs);
  if (files.hook.path.empty()) files.problems.push_back(NoHookProblem());
  return files;
}

}  // namespace wsched::agent
