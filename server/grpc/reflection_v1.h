// grpc.reflection.v1, served beside gRPC's own v1alpha plugin (gRPC 1.51
// has only v1alpha) over the same descriptors: the generated pool, which
// holds every .proto compiled into the server. Current clients (grpcurl,
// grpcui, Postman) ask for v1 first.
#ifndef WSCHED_SERVER_GRPC_REFLECTION_V1_H_
#define WSCHED_SERVER_GRPC_REFLECTION_V1_H_

#include <string>
#include <unordered_set>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>

#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace wsched::grpc_api {

class ReflectionV1Service final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  using Request = grpc::reflection::v1::ServerReflectionRequest;
  using Response = grpc::reflection::v1::ServerReflectionResponse;

  // `services`: the full names list_services answers with.
  explicit ReflectionV1Service(
      std::vector<std::string> services,
      const google::protobuf::DescriptorPool* pool = google::protobuf::DescriptorPool::generated_pool());

  grpc::Status ServerReflectionInfo(grpc::ServerContext* context,
                                    grpc::ServerReaderWriter<Response, Request>* stream) override;

  // One answer; `sent` holds the files already sent on this stream: their
  // imports are not sent again (the protocol allows it), the file asked for
  // always is. Public for unit tests.
  Response Answer(const Request& request, std::unordered_set<std::string>* sent) const;

 private:
  const std::vector<std::string> services_;
  const google::protobuf::DescriptorPool* const pool_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_REFLECTION_V1_H_
