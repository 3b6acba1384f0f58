#include "server/placement/resources.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/quantity.h"

namespace wsched::placement {

Resources& Resources::operator+=(const Resources& other) {
  cpu_millis += other.cpu_millis;
  memory_bytes += other.memory_bytes;
  ephemeral_storage_bytes += other.ephemeral_storage_bytes;
  disk_bytes += other.disk_bytes;
  return *this;
}

Resources& Resources::operator-=(const Resources& other) {
  cpu_millis -= other.cpu_millis;
  memory_bytes -= other.memory_bytes;
  ephemeral_storage_bytes -= other.ephemeral_storage_bytes;
  disk_bytes -= other.disk_bytes;
  return *this;
}

Resources RequestOf(const core::WorkspaceClass& cls) {
  return {cls.resources.cpu_request_millis, cls.resources.memory_bytes,
          cls.resources.ephemeral_storage_bytes, cls.resources.disk_bytes};
}

Resources AllocatableOf(const core::NodeInfo& node) {
  return {node.cpu_millis, node.memory_bytes, node.ephemeral_storage_bytes, node.disk_bytes};
}

bool Covers(const Resources& free, const Resources& request) {
  return free.cpu_millis >= request.cpu_millis && free.memory_bytes >= request.memory_bytes &&
         free.ephemeral_storage_bytes >= request.ephemeral_storage_bytes &&
         free.disk_bytes >= request.disk_bytes;
}

Resources RoomOfShape(const core::NodeShape& shape) {
  auto stated = [](int64_t v) { return v > 0 ? v : kUnstated; };
  return {stated(shape.cpu_millis), stated(shape.memory_bytes),
          stated(shape.ephemeral_storage_bytes), stated(shape.disk_bytes)};
}

int64_t HowManyFit(const Resources& room, const Resources& request) {
  if (!Covers(room, request)) return 0;
  auto times = [](int64_t has, int64_t needs) {
    return needs > 0 ? has / needs : std::numeric_limits<int64_t>::max();
  };
  return std::min({times(room.cpu_millis, request.cpu_millis),
                   times(room.memory_bytes, request.memory_bytes),
                   times(room.ephemeral_storage_bytes, request.ephemeral_storage_bytes),
                   times(room.disk_bytes, request.disk_bytes)});
}

std::string DescribeResources(const Resources& r) {
  std::vector<std::string> parts;
  if (r.cpu_millis > 0) parts.push_back(absl::StrCat(core::FormatCpuMillis(r.cpu_millis), " CPU"));
  if (r.memory_bytes > 0) parts.push_back(absl::StrCat(core::FormatBytes(r.memory_bytes), " memory"));
  if (r.ephemeral_storage_bytes > 0) {
    parts.push_back(
        absl::StrCat(core::FormatBytes(r.ephemeral_storage_bytes), " ephemeral storage"));
  }
  if (r.disk_bytes > 0) parts.push_back(absl::StrCat(core::FormatBytes(r.disk_bytes), " disk"));
  if (parts.empty()) return "no resources";
  return absl::StrJoin(parts, ", ");
}

}  // namespace wsched::placement
