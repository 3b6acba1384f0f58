#include "server/placement/nvlink_peers.h"

#include <algorithm>

namespace wsched::placement {
namespace {

const core::GpuLink* LinkTo(const core::Gpu& gpu, int peer) {
  auto it = std::find_if(gpu.links.begin(), gpu.links.end(),
                         [&](const core::GpuLink& link) { return link.peer == peer; });
  return it == gpu.links.end() ? nullptr : &*it;
}

const core::Gpu* GpuWithIndex(const std::vector<core::Gpu>& gpus, int index) {
  auto it = std::find_if(gpus.begin(), gpus.end(),
                         [&](const core::Gpu& gpu) { return gpu.index == index; });
  return it == gpus.end() ? nullptr : &*it;
}

}  // namespace

NvlinkPeers NvlinkPeers::Of(const std::vector<core::Gpu>& gpus) {
  NvlinkPeers peers;
  for (const core::Gpu& gpu : gpus) {
    for (const core::GpuLink& link : gpu.links) {
      if (link.kind != core::GpuLinkKind::kNvlink || link.peer <= gpu.index) continue;
      const core::Gpu* peer = GpuWithIndex(gpus, link.peer);
      const core::GpuLink* back = peer == nullptr ? nullptr : LinkTo(*peer, gpu.index);
      if (back != nullptr && back->kind == core::GpuLinkKind::kNvlink) {
        peers.pairs_.emplace_back(gpu.index, link.peer);
      }
    }
  }
  std::sort(peers.pairs_.begin(), peers.pairs_.end());
  peers.pairs_.erase(std::unique(peers.pairs_.begin(), peers.pairs_.end()), peers.pairs_.end());
  return peers;
}

bool NvlinkPeers::Linked(int a, int b) const {
  return std::binary_search(pairs_.begin(), pairs_.end(),
                            std::pair<int, int>(std::min(a, b), std::max(a, b)));
}

bool NvlinkPeers::AllLinked(const std::vector<int>& indices) const {
  for (size_t i = 0; i < indices.size(); ++i) {
    for (size_t j = i + 1; j < indices.size(); ++j) {
      if (!Linked(indices[i], indices[j])) return false;
    }
  }
  return true;
}

std::optional<core::GpuLinkKind> NvlinkPeers::Weakest(const std::vector<core::Gpu>& gpus,
                                                      const std::vector<int>& indices) {
  if (indices.size() < 2) return std::nullopt;
  core::GpuLinkKind weakest = core::GpuLinkKind::kNvlink;
  for (size_t i = 0; i < indices.size(); ++i) {
    const core::Gpu* gpu = GpuWithIndex(gpus, indices[i]);
    for (size_t j = i + 1; j < indices.size(); ++j) {
      const core::GpuLink* link = gpu == nullptr ? nullptr : LinkTo(*gpu, indices[j]);
      if (link == nullptr) return std::nullopt;
      weakest = std::max(weakest, link->kind);  // Kinds are ordered best first.
    }
  }
  return weakest;
}

}  // namespace wsched::placement
