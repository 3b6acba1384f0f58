#include "server/scaling/capacity.h"

#include <algorithm>

namespace wsched::scaling {
namespace {

int64_t OrUnlimited(int64_t declared) { return declared > 0 ? declared : Capacity::kUnlimited; }

// floor(room / need) for one dimension; a dimension the item does not use
// places no limit.
int64_t FitInDimension(int64_t room, int64_t need) {
  if (need <= 0) return std::numeric_limits<int64_t>::max();
  if (room <= 0) return 0;
  return room / need;
}

}  // namespace

Capacity Capacity::OfShape(const core::NodeShape& shape) {
  return {.gpus = shape.gpus_per_node,
          .cpu_millis = OrUnlimited(shape.cpu_millis),
          .memory_bytes = OrUnlimited(shape.memory_bytes),
          .ephemeral_storage_bytes = OrUnlimited(shape.ephemeral_storage_bytes),
          .disk_bytes = OrUnlimited(shape.disk_bytes)};
}

Capacity Capacity::OfClass(const core::WorkspaceClass& workspace_class) {
  const core::ClassResources& r = workspace_class.resources;
  return {.gpus = workspace_class.gpu.count,
          .cpu_millis = r.cpu_request_millis,
          .memory_bytes = r.memory_bytes,
          .ephemeral_storage_bytes = r.ephemeral_storage_bytes,
          .disk_bytes = r.disk_bytes};
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
  return std::min({FitInDimension(room.gpus, item.gpus),
                   FitInDimension(room.cpu_millis, item.cpu_millis),
                   FitInDimension(room.memory_bytes, item.memory_bytes),
                   FitInDimension(room.ephemeral_storage_bytes, item.ephemeral_storage_bytes),
                   FitInDimension(room.disk_bytes, item.disk_bytes)});
}

int64_t WorkspacesPerNode(const core::NodeShape& shape,
                          const core::WorkspaceClass& workspace_class) {
  return HowManyFit(Capacity::OfShape(shape), Capacity::OfClass(workspace_class));
}

}  // namespace wsched::scaling
