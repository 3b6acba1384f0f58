#include "server/store/documents/mig_document.h"

#include "server/store/documents/device_node.h"
#include "server/store/documents/enums.h"

namespace wsched::store::documents {
namespace {

const EnumNames& LinkKindNames() {
  using core::GpuLinkKind;
  static const EnumNames names = {
      {"GPU_LINK_KIND_UNSPECIFIED", static_cast<int>(GpuLinkKind::kSys)},
      {"GPU_LINK_KIND_NVLINK", static_cast<int>(GpuLinkKind::kNvlink)},
      {"GPU_LINK_KIND_PIX", static_cast<int>(GpuLinkKind::kPix)},
      {"GPU_LINK_KIND_PXB", static_cast<int>(GpuLinkKind::kPxb)},
      {"GPU_LINK_KIND_PHB", static_cast<int>(GpuLinkKind::kPhb)},
      {"GPU_LINK_KIND_NODE", static_cast<int>(GpuLinkKind::kNode)},
      {"GPU_LINK_KIND_SYS", static_cast<int>(GpuLinkKind::kSys)}};
  return names;
}

nlohmann::json ProfileJson(const core::MigProfile& profile) {
  return {{"name", profile.name},
          {"id", profile.id},
          {"compute_slices", profile.compute_slices},
          {"memory_bytes", profile.memory_bytes},
          {"size", profile.size},
          {"starts", profile.starts}};
}

core::MigProfile ReadProfile(Fields& p) {
  return {p.String("name"),        p.Int("id"),   p.Int("compute_slices"),
          p.Int64("memory_bytes"), p.Int("size"), p.Ints("starts")};
}

nlohmann::json InstanceJson(const core::MigInstance& slice) {
  nlohmann::json j = {{"profile", slice.profile},
                      {"gpu_instance", slice.gpu_instance},
                      {"compute_instance", slice.compute_instance},
                      {"start", slice.start},
                      {"size", slice.size},
                      {"uuid", slice.uuid},
                      {"cdi_device", slice.cdi_device}};
  if (slice.gi_access) j["gi_access"] = DeviceNodeJson(*slice.gi_access);
  if (slice.ci_access) j["ci_access"] = DeviceNodeJson(*slice.ci_access);
  return j;
}

core::MigInstance ReadInstance(Fields& s) {
  core::MigInstance slice;
  slice.profile = s.String("profile");
  slice.gpu_instance = s.Int("gpu_instance");
  slice.compute_instance = s.Int("compute_instance");
  slice.start = s.Int("start");
  slice.size = s.Int("size");
  slice.uuid = s.String("uuid");
  slice.cdi_device = s.String("cdi_device");
  if (std::optional<Fields> gi = s.Object("gi_access")) slice.gi_access = ReadDeviceNode(*gi);
  if (std::optional<Fields> ci = s.Object("ci_access")) slice.ci_access = ReadDeviceNode(*ci);
  return slice;
}

}  // namespace

nlohmann::json GpuMigJson(const core::GpuMig& mig) {
  nlohmann::json profiles = nlohmann::json::array();
  for (const auto& profile : mig.profiles) profiles.push_back(ProfileJson(profile));
  nlohmann::json instances = nlohmann::json::array();
  for (const auto& slice : mig.instances) instances.push_back(InstanceJson(slice));
  return {{"enabled", mig.enabled},
          {"pending_enabled", mig.pending_enabled},
          {"profiles", profiles},
          {"instances", instances}};
}

core::GpuMig ReadGpuMig(Fields& m) {
  core::GpuMig mig;
  mig.enabled = m.Bool("enabled");
  mig.pending_enabled = m.Bool("pending_enabled");
  for (Fields& p : m.Objects("profiles")) mig.profiles.push_back(ReadProfile(p));
  for (Fields& s : m.Objects("instances")) mig.instances.push_back(ReadInstance(s));
  return mig;
}

nlohmann::json GpuLinksJson(const std::vector<core::GpuLink>& links) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& link : links) {
    out.push_back({{"peer", link.peer},
                   {"kind", NameOf(LinkKindNames(), static_cast<int>(link.kind), 1)},
                   {"nvlinks", link.nvlinks}});
  }
  return out;
}

std::vector<core::GpuLink> ReadGpuLinks(Fields& gpu, const char* key) {
  std::vector<core::GpuLink> out;
  for (Fields& l : gpu.Objects(key)) {
    out.push_back({l.Int("peer"),
                   static_cast<core::GpuLinkKind>(
                       l.Enum("kind", LinkKindNames(), static_cast<int>(core::GpuLinkKind::kSys))),
                   l.Int("nvlinks")});
  }
  return out;
}

}  // namespace wsched::store::documents
