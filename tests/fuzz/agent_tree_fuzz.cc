// Discovery over a fake node root built from the input: files and symlinks
// anywhere below the root (sysfs is a forest of symlinks a compromised
// node controls), plus an nvidia-smi sample. Discovery must not crash, and
// must never read outside the root: files planted next to it carry a
// marker that must not show up in the discovered node.
//
// Input: records of [type 1 byte]['F' file | 'L' symlink | 'S' nvidia-smi
// CSV] [path length 1 byte][path, relative] [content length 2 bytes, big
// endian][content: file bytes or link target]. `pack_tree.py` turns the
// trees of tests/sysfs into seeds.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "server/agent/discovery.h"
#include "server/agent/node_json.h"
#include "server/agent/nvidia_smi.h"
#include "tests/fuzz/fuzz_check.h"

namespace fs = std::filesystem;
namespace agent = wsched::agent;

namespace {

constexpr char kMarker[] = "OUTSIDE-THE-ROOT-7f3a";
constexpr int kMaxRecords = 512;

// <base>/root is the node's "/"; <base>/outside mirrors the files discovery
// reads, holding the marker. ../outside from the root reaches them.
const fs::path& Base() {
  static const fs::path* base = [] {
    // Every input rebuilds the tree: memory-backed /dev/shm is many times
    // faster than a disk-backed /tmp.
    std::error_code error;
    fs::path dir = fs::is_directory("/dev/shm", error) ? fs::path("/dev/shm")
                                                        : fs::temp_directory_path();
    auto* path = new fs::path(dir / ("wsched-fuzz-tree-" + std::to_string(getpid())));
    for (const char* file : {"sys/module/nvidia/version", "proc/sys/kernel/osrelease",
                             "proc/driver/nvidia/version", "etc/os-release", "etc/hostname",
                             "proc/cpuinfo", "proc/meminfo", "proc/devices"}) {
      fs::path at = *path / "outside" / file;
      fs::create_directories(at.parent_path());
      std::ofstream(at) << kMarker << "\nID=" << kMarker << "\nMemTotal: 1 kB\nprocessor : 0\n";
    }
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(Base(), ignored);
    });
    return path;
  }();
  return *base;
}

bool SafeRelative(const std::string& path) {
  if (path.empty() || path[0] == '/' || path.find('\0') != std::string::npos) return false;
  int depth = 0;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == ".." || ++depth > 12) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path root = Base() / "root";
  std::error_code error;
  fs::remove_all(root, error);
  fs::create_directories(root, error);
  agent::DiscoveryOptions options;
  options.root = root.string();
  options.node_name = "fuzz-node";
  options.pool = "gpu";
  size_t at = 0;
  for (int records = 0; records < kMaxRecords && at + 4 <= size; ++records) {
    const char type = static_cast<char>(data[at]);
    const size_t path_len = data[at + 1];
    if (at + 2 + path_len + 2 > size) break;
    std::string path(reinterpret_cast<const char*>(data + at + 2), path_len);
    const size_t content_at = at + 2 + path_len + 2;
    const size_t content_len = (size_t{data[content_at - 2]} << 8) | data[content_at - 1];
    if (content_at + content_len > size) break;
    std::string content(reinterpret_cast<const char*>(data + content_at), content_len);
    at = content_at + content_len;
    if (type == 'S') {
      auto sample = agent::ParseNvidiaSmiCsv(content);
      if (sample.ok()) options.nvidia_smi = *std::move(sample);
      continue;
    }
    if (!SafeRelative(path)) continue;
    fs::path target = root / path;
    fs::create_directories(target.parent_path(), error);
    if (type == 'F') {
      std::ofstream(target, std::ios::binary) << content;
    } else if (type == 'L' && !content.empty() && content.find('\0') == std::string::npos) {
      fs::create_symlink(content, target, error);
    }
  }
  auto node = agent::DiscoverNode(options);
  if (!node.ok()) return 0;
  std::string json = agent::NodeInfoToJson(*node, agent::ClassifyGpus(*node));
  FUZZ_CHECK(!absl::StrContains(json, kMarker), "discovery read a file outside the root:\n%s",
             json.c_str());
  return 0;
}
