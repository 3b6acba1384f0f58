// Request validation of every RPC, from the bytes a client can send: the
// first byte picks the RPC, the rest is its request message. Validation
// must not crash, and a request it accepts must be bounded: no string over
// kMaxValidatedStringBytes (the catalog YAML aside), no list over
// kMaxValidatedListEntries, no unknown enum value.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "server/grpc/request_validation.h"
#include "tests/fuzz/fuzz_check.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

const std::vector<const google::protobuf::MethodDescriptor*>& Methods() {
  static const auto* methods = [] {
    auto* out = new std::vector<const google::protobuf::MethodDescriptor*>;
    // Referencing a message of each file links it (and its service) in.
    (void)wsched::v1::ListClassesRequest::descriptor();
    (void)wsched::v1::ResolveClassRequest::descriptor();
    (void)wsched::v1::ListNodesRequest::descriptor();
    (void)wsched::v1::PlaceWorkspaceRequest::descriptor();
    (void)wsched::v1::ScalingState::descriptor();
    (void)wsched::v1::ListUsageRequest::descriptor();
    const auto* pool = google::protobuf::DescriptorPool::generated_pool();
    for (const char* name :
         {wsched::v1::ClassService::service_full_name(),
          wsched::v1::SettingsService::service_full_name(),
          wsched::v1::InventoryService::service_full_name(),
          wsched::v1::PlacementService::service_full_name(),
          wsched::v1::ScalingService::service_full_name(),
          wsched::v1::UsageService::service_full_name()}) {
      const auto* service = pool->FindServiceByName(name);
      FUZZ_CHECK(service != nullptr, "service %s is not linked in", name);
      for (int i = 0; i < service->method_count(); ++i) out->push_back(service->method(i));
    }
    return out;
  }();
  return *methods;
}

bool Exempt(const FieldDescriptor* field) {
  return field->full_name() == "wsched.v1.ApplyCatalogRequest.yaml";
}

void CheckBounded(const Message& message, const std::string& method) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const char* name = field->full_name().c_str();
    if (field->is_repeated()) {
      int count = reflection->FieldSize(message, field);
      FUZZ_CHECK(count <= wsched::grpc_api::kMaxValidatedListEntries, "%s: %s has %d entries",
                 method.c_str(), name, count);
      for (int i = 0; i < count; ++i) {
        if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
          CheckBounded(reflection->GetRepeatedMessage(message, field, i), method);
        } else if (field->type() == FieldDescriptor::TYPE_STRING ||
                   field->type() == FieldDescriptor::TYPE_BYTES) {
          FUZZ_CHECK(reflection->GetRepeatedString(message, field, i).size() <=
                         wsched::grpc_api::kMaxValidatedStringBytes,
                     "%s: %s[%d] is too long", method.c_str(), name, i);
        } else if (field->type() == FieldDescriptor::TYPE_ENUM) {
          int value = reflection->GetRepeatedEnumValue(message, field, i);
          FUZZ_CHECK(field->enum_type()->FindValueByNumber(value) != nullptr,
                     "%s: %s[%d] = %d is not a known value", method.c_str(), name, i, value);
        }
      }
      continue;
    }
    switch (field->type()) {
      case FieldDescriptor::TYPE_MESSAGE:
        CheckBounded(reflection->GetMessage(message, field), method);
        break;
      case FieldDescriptor::TYPE_STRING:
      case FieldDescriptor::TYPE_BYTES:
        if (!Exempt(field)) {
          FUZZ_CHECK(reflection->GetString(message, field).size() <=
                         wsched::grpc_api::kMaxValidatedStringBytes,
                     "%s: %s is too long", method.c_str(), name);
        }
        break;
      case FieldDescriptor::TYPE_ENUM: {
        int value = reflection->GetEnumValue(message, field);
        FUZZ_CHECK(field->enum_type()->FindValueByNumber(value) != nullptr,
                   "%s: %s = %d is not a known value", method.c_str(), name, value);
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 20)) return 0;
  const auto* method = Methods()[data[0] % Methods().size()];
  const Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(method->input_type());
  std::unique_ptr<Message> request(prototype->New());
  if (!request->ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  absl::Status status = wsched::grpc_api::ValidateAnyRequest(*request);
  FUZZ_CHECK(status.code() != absl::StatusCode::kUnimplemented, "%s has no validator",
             method->full_name().c_str());
  if (!status.ok()) {
    FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument && !status.message().empty(),
               "%s: a refusal must be INVALID_ARGUMENT with a message, got %s",
               method->full_name().c_str(), status.ToString().c_str());
    return 0;
  }
  CheckBounded(*request, method->full_name());
  return 0;
}
