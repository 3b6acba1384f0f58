// A GPU's MIG slices and links (core/mig.h) <-> wsched.v1 inventory messages.
#ifndef WSCHED_SERVER_CONVERT_MIG_CONVERT_H_
#define WSCHED_SERVER_CONVERT_MIG_CONVERT_H_

#include "server/core/mig.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::convert {

v1::GpuLinkKind ToProto(core::GpuLinkKind kind);
core::GpuLinkKind FromProto(v1::GpuLinkKind kind);
v1::GpuMig ToProto(const core::GpuMig& mig);
core::GpuMig FromProto(const v1::GpuMig& mig);
v1::GpuLink ToProto(const core::GpuLink& link);
// UNSPECIFIED and unknown kinds read as kSys, the weakest: a link nobody
// named never counts as NVLink.
core::GpuLink FromProto(const v1::GpuLink& link);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_MIG_CONVERT_H_
