#include "server/convert/mig_convert.h"

#include "server/convert/convert.h"

namespace wsched::convert {
namespace {

v1::MigProfile ToProto(const core::MigProfile& profile) {
  v1::MigProfile out;
  out.set_name(profile.name);
  out.set_id(profile.id);
  out.set_compute_slices(profile.compute_slices);
  out.set_memory_bytes(profile.memory_bytes);
  out.set_size(profile.size);
  for (int start : profile.starts) out.add_starts(start);
  return out;
}

core::MigProfile FromProto(const v1::MigProfile& profile) {
  return {profile.name(),           profile.id(),
          profile.compute_slices(), profile.memory_bytes(),
          profile.size(),           {profile.starts().begin(), profile.starts().end()}};
}

v1::MigInstance ToProto(const core::MigInstance& slice) {
  v1::MigInstance out;
  out.set_profile(slice.profile);
  out.set_gpu_instance(slice.gpu_instance);
  out.set_compute_instance(slice.compute_instance);
  out.set_start(slice.start);
  out.set_size(slice.size);
  out.set_uuid(slice.uuid);
  if (slice.gi_access) convert::ToProto(*slice.gi_access, out.mutable_gi_access());
  if (slice.ci_access) convert::ToProto(*slice.ci_access, out.mutable_ci_access());
  out.set_cdi_device(slice.cdi_device);
  return out;
}

core::MigInstance FromProto(const v1::MigInstance& slice) {
  core::MigInstance out;
  out.profile = slice.profile();
  out.gpu_instance = slice.gpu_instance();
  out.compute_instance = slice.compute_instance();
  out.start = slice.start();
  out.size = slice.size();
  out.uuid = slice.uuid();
  if (slice.has_gi_access()) out.gi_access = convert::FromProto(slice.gi_access());
  if (slice.has_ci_access()) out.ci_access = convert::FromProto(slice.ci_access());
  out.cdi_device = slice.cdi_device();
  return out;
}

}  // namespace

v1::GpuLinkKind ToProto(core::GpuLinkKind kind) {
  switch (kind) {
    case core::GpuLinkKind::kNvlink:
      return v1::GPU_LINK_KIND_NVLINK;
    case core::GpuLinkKind::kPix:
      return v1::GPU_LINK_KIND_PIX;
    case core::GpuLinkKind::kPxb:
      return v1::GPU_LINK_KIND_PXB;
    case core::GpuLinkKind::kPhb:
      return v1::GPU_LINK_KIND_PHB;
    case core::GpuLinkKind::kNode:
      return v1::GPU_LINK_KIND_NODE;
    case core::GpuLinkKind::kSys:
      return v1::GPU_LINK_KIND_SYS;
  }
  return v1::GPU_LINK_KIND_SYS;
}

core::GpuLinkKind FromProto(v1::GpuLinkKind kind) {
  switch (kind) {
    case v1::GPU_LINK_KIND_NVLINK:
      return core::GpuLinkKind::kNvlink;
    case v1::GPU_LINK_KIND_PIX:
      return core::GpuLinkKind::kPix;
    case v1::GPU_LINK_KIND_PXB:
      return core::GpuLinkKind::kPxb;
    case v1::GPU_LINK_KIND_PHB:
      return core::GpuLinkKind::kPhb;
    case v1::GPU_LINK_KIND_NODE:
      return core::GpuLinkKind::kNode;
    default:
      return core::GpuLinkKind::kSys;
  }
}

v1::GpuMig ToProto(const core::GpuMig& mig) {
  v1::GpuMig out;
  out.set_enabled(mig.enabled);
  out.set_pending_enabled(mig.pending_enabled);
  for (const auto& profile : mig.profiles) *out.add_profiles() = ToProto(profile);
  for (const auto& slice : mig.instances) *out.add_instances() = ToProto(slice);
  return out;
}

core::GpuMig FromProto(const v1::GpuMig& mig) {
  core::GpuMig out;
  out.enabled = mig.enabled();
  out.pending_enabled = mig.pending_enabled();
  for (const auto& profile : mig.profiles()) out.profiles.push_back(FromProto(profile));
  for (const auto& slice : mig.instances()) out.instances.push_back(FromProto(slice));
  return out;
}

v1::GpuLink ToProto(const core::GpuLink& link) {
  v1::GpuLink out;
  out.set_peer(link.peer);
  out.set_kind(ToProto(link.kind));
  out.set_nvlinks(link.nvlinks);
  return out;
}

core::GpuLink FromProto(const v1::GpuLink& link) {
  return {link.peer(), FromProto(link.kind()), link.nvlinks()};
}

}  // namespace wsched::convert
