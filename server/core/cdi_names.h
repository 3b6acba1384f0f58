// The naming rules of the Container Device Interface (CDI): qualified device
// names ("vendor.com/class=name") and the Kubernetes annotations that request
// them ("cdi.k8s.io/<plugin>_<device>"). A name that breaks them makes a
// runtime refuse the whole container, so wsched checks them where names are
// reported and before it hands an answer out.
#ifndef WSCHED_SERVER_CORE_CDI_NAMES_H_
#define WSCHED_SERVER_CORE_CDI_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wsched::core {

// wsched's own kinds; never NVIDIA's "nvidia.com/gpu" (two spec files that
// define one name make that device unusable).
inline constexpr char kWschedGpuKind[] = "wsched.io/gpu";
inline constexpr char kWschedDeviceKind[] = "wsched.io/device";
inline constexpr char kNvidiaGpuKind[] = "nvidia.com/gpu";
inline constexpr char kCdiAnnotationPrefix[] = "cdi.k8s.io/";
// The spec version wsched writes: the newest that podman 4.3 (Debian 12)
// and containerd 1.7 read, and enough for hostPath on device nodes.
inline constexpr char kCdiVersion[] = "0.5.0";

// "vendor/class": vendor starts with a letter, then letters, digits, '-',
// '_', '.', ends with a letter or digit; class the same without '.'.
bool IsCdiKind(absl::string_view kind);
// A device name: letters, digits, '-', '_', '.', ':', starting and ending
// with a letter or digit.
bool IsCdiDeviceName(absl::string_view name);
// "vendor/class=name" with each part as above.
bool IsCdiQualifiedName(absl::string_view qualified);
std::string CdiQualifiedName(absl::string_view kind, absl::string_view name);

// The annotation key CDI defines for Kubernetes: "cdi.k8s.io/" + plugin +
// "_" + device_id ('/' becomes '_'); the part after the prefix is at most
// 63 characters, starts and ends alphanumeric, and holds only letters,
// digits, '-', '_' and '.'. InvalidArgument names the rule broken.
absl::StatusOr<std::string> CdiAnnotationKey(absl::string_view plugin, absl::string_view device_id);
// Comma-separated qualified names; InvalidArgument on an empty list or a
// name that is not qualified.
absl::StatusOr<std::string> CdiAnnotationValue(const std::vector<std::string>& qualified_names);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_CDI_NAMES_H_
