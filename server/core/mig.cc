#include "server/core/mig.h"

namespace wsched::core {

const char* GpuLinkKindName(GpuLinkKind kind) {
  switch (kind) {
    case GpuLinkKind::kNvlink:
      return "nvlink";
    case GpuLinkKind::kPix:
      return "pix";
    case GpuLinkKind::kPxb:
      return "pxb";
    case GpuLinkKind::kPhb:
      return "phb";
    case GpuLinkKind::kNode:
      return "node";
    case GpuLinkKind::kSys:
      return "sys";
  }
  return "sys";
}

std::optional<GpuLinkKind> ParseGpuLinkKind(absl::string_view name) {
  for (GpuLinkKind kind : {GpuLinkKind::kNvlink, GpuLinkKind::kPix, GpuLinkKind::kPxb,
                           GpuLinkKind::kPhb, GpuLinkKind::kNode, GpuLinkKind::kSys}) {
    if (name == GpuLinkKindName(kind)) return kind;
  }
  return std::nullopt;
}

}  // namespace wsched::core
