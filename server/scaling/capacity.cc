#include "server/scaling/capacity.h"

#include <algorithm>

namespace wsched::scaling {
namespace {

Capacity WithGpus(int64_t gpus, const placement::Resources& r) {
  return {.gpus = gpus,
          .cpu_millis = r.cpu_millis,
          .memory_bytes = r.memory_bytes,
          .ephemeral_storage_bytes = r.ephemeral_storage_bytes,
          .disk_bytes = r.disk_bytes};
}

}  // namespace

Capacity Capacity::OfShape(const core::NodeShape& shape) {
  return WithGpus(shape.gpus_per_node, placement::RoomOfShape(shape));
}

Capacity Capacity::OfClass(const core::WorkspaceClass& workspace_class) {
  return WithGpus(workspace_class.gpu.count, placement::RequestOf(workspace_class));
}

Capacity& Capacity::operator-=(const Capacity& other) {
  gpus -= other.gpus;
  cpu_millis -= other.cpu_millis;
  memory_bytes -= other.memory_bytes;
  ephemeral_storage_bytes -= other.ephemeral_storage_bytes;
  disk_bytes -= other.disk_bytes;
  return *this;
}

int64_t HowManyFit(const Capacity& room, const Capacity& item) {
  // Whole GPUs first (placement counts them by index, not as a quantity).
  if (item.gpus > 0 && room.gpus < item.gpus) return 0;
  const int64_t by_gpus = item.gpus > 0 ? room.gpus / item.gpus : std::numeric_limits<int64_t>::max();
  return std::min(by_gpus, placement::HowManyFit(room.resources(), item.resources()));
}

int64_t WorkspacesPerNode(const core::NodeShape& shape,
                          const core::WorkspaceClass& workspace_class) {
  return HowManyFit(Capacity::OfShape(shape), Capacity::OfClass(workspace_class));
}

}  // namespace wsched::scaling
