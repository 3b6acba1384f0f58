#include "server/cli/gpu_topology_text.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wsched::cli {
namespace {

// nvidia-smi's own words for a link, so the line reads like `topo -m`.
std::string LinkWord(const v1::GpuLink& link) {
  switch (link.kind()) {
    case v1::GPU_LINK_KIND_NVLINK:
      return absl::StrCat("NV", link.nvlinks());
    case v1::GPU_LINK_KIND_PIX:
      return "PIX";
    case v1::GPU_LINK_KIND_PXB:
      return "PXB";
    case v1::GPU_LINK_KIND_PHB:
      return "PHB";
    case v1::GPU_LINK_KIND_NODE:
      return "NODE";
    default:
      return "SYS";
  }
}

// Free memory slots as ranges: "4-5, 7"; "none" when all are taken.
std::string FreeSlots(const v1::GpuMig& mig) {
  constexpr int kSlots = 8;
  bool used[kSlots] = {};
  for (const auto& slice : mig.instances()) {
    for (int s = slice.start(); s < slice.start() + slice.size() && s < kSlots; ++s) {
      if (s >= 0) used[s] = true;
    }
  }
  std::vector<std::string> ranges;
  for (int s = 0; s < kSlots;) {
    if (used[s]) {
      ++s;
      continue;
    }
    int end = s;
    while (end + 1 < kSlots && !used[end + 1]) ++end;
    ranges.push_back(end == s ? absl::StrCat(s) : absl::StrCat(s, "-", end));
    s = end + 1;
  }
  return ranges.empty() ? "none" : absl::StrJoin(ranges, ", ");
}

// " (MIG-aa11, cdi wsched.io/gpu=MIG-aa11)": the UUID and the CDI device a
// container asks for, those the node reports; empty without either.
std::string SliceNames(const v1::MigInstance& slice) {
  std::vector<std::string> names;
  if (!slice.uuid().empty()) names.push_back(slice.uuid());
  if (!slice.cdi_device().empty()) names.push_back("cdi " + slice.cdi_device());
  return names.empty() ? "" : absl::StrCat(" (", absl::StrJoin(names, ", "), ")");
}

}  // namespace

std::vector<std::string> GpuLinkLines(const v1::NodeInfo& node) {
  std::vector<std::string> lines;
  for (const auto& gpu : node.gpus()) {
    if (gpu.links().empty()) continue;
    // Peers grouped by link word, best link first, in the order reported.
    std::map<int, std::pair<std::string, std::vector<std::string>>> by_kind;
    for (const auto& link : gpu.links()) {
      int order = link.kind() * 1000 - link.nvlinks();  // NV18 before NV4.
      auto& [word, peers] = by_kind[order];
      word = LinkWord(link);
      peers.push_back(absl::StrCat(link.peer()));
    }
    std::vector<std::string> parts;
    for (const auto& [order, group] : by_kind) {
      parts.push_back(absl::StrCat(group.first, " to ", absl::StrJoin(group.second, ", ")));
    }
    lines.push_back(absl::StrCat("gpu ", gpu.index(), " links: ", absl::StrJoin(parts, "; ")));
  }
  return lines;
}

std::vector<std::string> GpuMigLines(const v1::NodeInfo& node) {
  std::vector<std::string> lines;
  for (const auto& gpu : node.gpus()) {
    if (!gpu.has_mig()) continue;
    const v1::GpuMig& mig = gpu.mig();
    std::string line = absl::StrCat("gpu ", gpu.index(), " mig ", mig.enabled() ? "on" : "off");
    if (mig.pending_enabled() != mig.enabled()) {
      absl::StrAppend(&line, " (", mig.pending_enabled() ? "on" : "off", " after reset)");
    }
    if (mig.enabled()) {
      std::vector<std::string> slices;
      for (const auto& slice : mig.instances()) {
        slices.push_back(absl::StrCat(slice.profile(), " ", slice.start(), ":", slice.size(),
                                      SliceNames(slice)));
      }
      absl::StrAppend(&line, ": ", slices.empty() ? "no slices" : absl::StrJoin(slices, ", "),
                      "; slots ", FreeSlots(mig), " free");
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace wsched::cli
