// A placed workspace's hand-off (documents.h): its GPUs under "gpus", a
// slice class's MIG slice under "slice", how to mount them under
// "device_spec" (the shape version 1 rows have; "slice" is optional there).
#include <nlohmann/json.hpp>

#include "server/store/documents/device_node.h"
#include "server/store/documents/documents.h"
#include "server/store/documents/enums.h"
#include "server/store/documents/fields.h"

namespace wsched::store::documents {
namespace {

nlohmann::json CdiJson(const core::CdiHandOff& cdi) {
  nlohmann::json j = {{"mode", NameOf(CdiModeNames(), static_cast<int>(cdi.mode))},
                      {"spec_json", cdi.spec_json},
                      {"device_names", cdi.device_names},
                      {"env", cdi.env},
                      {"podman_args", cdi.podman_args}};
  if (cdi.mode != core::CdiMode::kInline) {
    j["kubernetes"] = {{"node_name", cdi.kubernetes_node_name},
                       {"annotations", cdi.kubernetes_annotations},
                       {"unnamed_devices", cdi.kubernetes_unnamed_devices}};
  }
  return j;
}

core::CdiHandOff ReadCdi(Fields& c) {
  core::CdiHandOff cdi;
  cdi.mode = static_cast<core::CdiMode>(c.Enum("mode", CdiModeNames()));
  cdi.spec_json = c.String("spec_json");
  cdi.device_names = c.Strings("device_names");
  cdi.env = c.Strings("env");
  cdi.podman_args = c.Strings("podman_args");
  if (std::optional<Fields> k = c.Object("kubernetes")) {
    cdi.kubernetes_node_name = k->String("node_name");
    cdi.kubernetes_annotations = k->StringMap("annotations");
    cdi.kubernetes_unnamed_devices = k->Strings("unnamed_devices");
  }
  return cdi;
}

nlohmann::json GpuJson(const core::AssignedGpu& gpu) {
  return {{"index", gpu.index},
          {"uuid", gpu.uuid},
          {"pci_address", gpu.pci_address},
          {"model", gpu.model}};
}

core::AssignedGpu ReadGpu(Fields& g) {
  return {g.Int("index"), g.String("uuid"), g.String("pci_address"), g.String("model")};
}

// A slice's parent GPU is not under "gpus": the usage ledger counts those
// as GPUs held whole (migrations/0010_usage_ledger.sql).
nlohmann::json SliceJson(const core::AssignedSlice& slice) {
  return {{"gpu", GpuJson(slice.parent)},
          {"gpu_instance", slice.gpu_instance},
          {"compute_instance", slice.compute_instance},
          {"uuid", slice.uuid},
          {"profile", slice.profile},
          {"compute_slices", slice.compute_slices}};
}

core::AssignedSlice ReadSlice(Fields& s) {
  core::AssignedSlice slice;
  if (std::optional<Fields> g = s.Object("gpu")) slice.parent = ReadGpu(*g);
  slice.gpu_instance = s.Int("gpu_instance");
  slice.compute_instance = s.Int("compute_instance");
  slice.uuid = s.String("uuid");
  slice.profile = s.String("profile");
  slice.compute_slices = s.Int("compute_slices");
  return slice;
}

}  // namespace

std::string EncodeHandOff(const core::HandOff& hand_off) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : hand_off.gpus) gpus.push_back(GpuJson(gpu));
  nlohmann::json spec = {{"extra_devices", DeviceNodesJson(hand_off.extra_devices)}};
  if (hand_off.cdi) spec["cdi"] = CdiJson(*hand_off.cdi);
  if (hand_off.vfio) {
    spec["vfio"] = {{"pci_addresses", hand_off.vfio->pci_addresses},
                    {"device_paths", hand_off.vfio->device_paths},
                    {"cloud_hypervisor_args", hand_off.vfio->cloud_hypervisor_args}};
  }
  nlohmann::json j = {{"gpus", gpus}, {"device_spec", spec}};
  if (hand_off.gpu_link) j["gpu_link"] = core::GpuLinkKindName(*hand_off.gpu_link);
  if (hand_off.slice) j["slice"] = SliceJson(*hand_off.slice);
  return j.dump();
}

absl::StatusOr<core::HandOff> DecodeHandOff(absl::string_view json, const Origin& origin) {
  Decoding decoding(origin);
  std::optional<nlohmann::json> parsed = decoding.Parse(json);
  if (!parsed) return decoding.status();
  Fields h(*parsed, decoding);
  core::HandOff hand_off;
  for (Fields& g : h.Objects("gpus")) hand_off.gpus.push_back(ReadGpu(g));
  if (std::optional<Fields> s = h.Object("slice")) hand_off.slice = ReadSlice(*s);
  if (h.Has("gpu_link")) {
    const std::string link = h.String("gpu_link");
    hand_off.gpu_link = core::ParseGpuLinkKind(link);
    if (!hand_off.gpu_link) decoding.Fail(h.PathOf("gpu_link"), "is not a link kind: " + link);
  }
  if (std::optional<Fields> spec = h.Object("device_spec")) {
    if (std::optional<Fields> c = spec->Object("cdi")) hand_off.cdi = ReadCdi(*c);
    if (std::optional<Fields> v = spec->Object("vfio")) {
      hand_off.vfio = core::VfioHandOff{v->Strings("pci_addresses"), v->Strings("device_paths"),
                                        v->Strings("cloud_hypervisor_args")};
    }
    hand_off.extra_devices = ReadDeviceNodes(*spec, "extra_devices");
  }
  if (!decoding.ok()) return decoding.status();
  return hand_off;
}

}  // namespace wsched::store::documents
